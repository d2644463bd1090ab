import { randomBytes } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { hashToken, newToken } from '../../src/lib/tokens.js';
import { cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';
import { identityRow, sessionRow, stored, unmarked } from '../helpers/records.js';
import { runServe, type ServeProcess } from '../helpers/serve.js';

const CHECKED = 'pre-checksum tokens checked';

/** `tessera serve` looks for pre-checksum tokens once migrated (docs/tokens.md). */
describe('tessera serve and pre-checksum tokens', () => {
  let box: CliSandbox | undefined;
  let server: ServeProcess | undefined;
  afterEach(async () => {
    await server?.stop();
    box?.remove();
    server = undefined;
    box = undefined;
  });

  const start = async () => {
    server = await runServe({
      ...box!.env,
      SERVICE_LOG_LEVEL: 'info',
      SERVICE_PORT: '0',
    }).listening;
    const line = await server.waitForLine((candidate) => candidate.includes(CHECKED));
    return (JSON.parse(line) as { legacy_tokens_remain: Record<string, boolean> })
      .legacy_tokens_remain;
  };
  const whoami = (token: string) =>
    fetch(`${server!.url}/v1/whoami`, { headers: { cookie: `service_session=${token}` } });

  it('on a database without any, says so at start-up', async () => {
    box = cliSandbox();
    expect(await start()).toEqual({ session: false, service: false, flow: false });
    const res = await whoami(newToken('session'));
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'invalid_token' });
  }, 60_000);

  it('keeps a session minted before checksums working', async () => {
    box = cliSandbox();
    expect((await runCli(['migrate'], box.env)).code).toBe(0);
    const token = `tess_s_${randomBytes(32).toString('base64url')}`;
    const db = new BetterSqlite3(box.databaseFile);
    const identity = identityRow();
    const columns = (row: object) => Object.keys(row).join(', ');
    const marks = (row: object) =>
      Object.keys(row)
        .map(() => '?')
        .join(', ');
    db.prepare(`INSERT INTO identities (${columns(identity)}) VALUES (${marks(identity)})`).run(
      ...Object.values(identity),
    );
    // As a version before checksums wrote it: the row does not name its format.
    const session = unmarked(
      stored({
        ...sessionRow(identity.id, { issued_at: Date.now(), expires_at: Date.now() + 3_600_000 }),
        token,
        token_hash: hashToken(token),
      }),
    );
    db.prepare(`INSERT INTO sessions (${columns(session)}) VALUES (${marks(session)})`).run(
      ...Object.values(session),
    );
    db.close();

    expect(await start()).toEqual({ session: true, service: false, flow: false });
    const res = await whoami(token);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ identity: { id: identity.id } });
  }, 60_000);
});
