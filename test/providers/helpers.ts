import { mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import type { DatabaseKind, TestDatabase } from '../helpers/databases.js';
import { freePort } from '../oidc/helpers.js';

// Shared by the files a test worker runs (isolate: false), so removed with the run's scratch.
const dir = mkdtempSync(join(inject('scratchDir'), 'providers-'));
let files = 0;

/** A providers file (docs/providers.md) written for one test app. */
export function providersFile(providers: object[]): string {
  files += 1;
  const file = join(dir, `providers-${files}.json`);
  writeFileSync(file, JSON.stringify({ providers }));
  return file;
}

export interface Downstream extends TestApp {
  /** `http://localhost:<port>`: another host name than the upstream's 127.0.0.1, so the two keep their own cookies. */
  origin: string;
  port: number;
}

/**
 * A Tessera relying on upstream providers, listening on localhost (the upstream Tessera is
 * on 127.0.0.1: cookies are per host, not per port). Its clock is set to the real time:
 * ID tokens are stamped by the upstream's real clock.
 */
export async function startDownstream(
  kind: DatabaseKind,
  providers: object[],
  env: Record<string, string>,
  options: { db?: TestDatabase; port?: number } = {},
): Promise<Downstream> {
  const port = options.port ?? (await freePort());
  const t = await createTestApp(
    kind,
    { SERVICE_PROVIDERS_FILE: providersFile(providers), ...env },
    options.db,
  );
  t.clock.advance(Date.now() - t.clock.now());
  await t.app.listen({ port, host: '127.0.0.1' });
  return Object.assign(t, { origin: `http://localhost:${port}`, port });
}

export const UPSTREAM_SECRET_ENV = 'UPSTREAM_CLIENT_SECRET';
