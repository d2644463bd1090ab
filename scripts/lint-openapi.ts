/**
 * Lints the OpenAPI document with Redocly's recommended rules (redocly.yaml): builds the app
 * in-process on an in-memory SQLite database, fetches `GET /v1/openapi.json` from it, writes
 * it to a file and runs `redocly lint` on that. Exits non-zero on any error.
 *
 * Usage: npm run lint:openapi [-- --out openapi.json]   (--out keeps the document there)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildOpenApiDocument } from './openapi-document.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { out: { type: 'string' } } });

const document = await buildOpenApiDocument();

const tempDir = values.out ? undefined : mkdtempSync(join(tmpdir(), 'tessera-openapi-'));
const file = values.out ? resolve(values.out) : join(tempDir!, 'openapi.json');
writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`);

const lint = spawnSync(
  join(root, 'node_modules', '.bin', 'redocly'),
  ['lint', file, '--config', join(root, 'redocly.yaml')],
  {
    stdio: 'inherit',
    // No usage data leaves CI, and no update check.
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' },
  },
);
if (tempDir) rmSync(tempDir, { recursive: true, force: true });
process.exit(lint.status ?? 1);
