import { randomBytes } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken } from '../../src/lib/tokens.js';
import { cliJson, cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';
import { identityRow, sessionRow, stored, unmarked } from '../helpers/records.js';

interface LegacyReport {
  sessions: number;
  service_tokens: number;
  flows: number;
  service_tokens_to_rotate: { id: string; name: string }[];
}

/** docs/tokens.md: the operator's view of what keeps pre-checksum tokens acceptable. */
describe('tessera legacy-tokens', () => {
  let box: CliSandbox;
  let oldServiceId: string;
  beforeAll(async () => {
    box = cliSandbox();
    expect((await runCli(['migrate'], box.env)).code).toBe(0);
    // Rows as a version before checksums wrote them: no token_format column named.
    const db = new BetterSqlite3(box.databaseFile);
    const identity = identityRow();
    db.prepare(
      'INSERT INTO identities (id, username, display_name, avatar_url, state, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    ).run(
      ...(['id', 'username', 'display_name', 'avatar_url', 'state', 'password_hash'] as const).map(
        (column) => identity[column],
      ),
      identity.created_at,
      identity.updated_at,
    );
    const session = unmarked(
      stored(sessionRow(identity.id, { expires_at: Date.now() + 3_600_000 })),
    );
    db.prepare(
      `INSERT INTO sessions (${Object.keys(session).join(', ')}) VALUES (${Object.keys(session)
        .map(() => '?')
        .join(', ')})`,
    ).run(...Object.values(session));
    oldServiceId = '0190c7f8-0000-7000-8000-00000000000a';
    db.prepare(
      "INSERT INTO service_tokens (id, name, token_hash, grants, created_at) VALUES (?, 'old-billing', ?, 'introspect', ?)",
    ).run(oldServiceId, hashToken(`tess_svc_${randomBytes(32).toString('base64url')}`), Date.now());
    db.close();
  });
  afterAll(() => box?.remove());

  it('counts pre-checksum rows and names the service tokens to rotate', async () => {
    expect(
      (await runCli(['svc', 'create', '--name', 'new-billing', '--grant', 'introspect'], box.env))
        .code,
    ).toBe(0);
    expect(await cliJson<LegacyReport>(['legacy-tokens'], box.env)).toEqual({
      sessions: 1,
      service_tokens: 1,
      flows: 0,
      service_tokens_to_rotate: [{ id: oldServiceId, name: 'old-billing' }],
    });
    const human = await runCli(['legacy-tokens'], box.env);
    expect(human.stdout).toBe(
      'pre-checksum tokens still accepted: 1 session(s), 1 service token(s), 0 flow(s)\n' +
        `rotate service old-billing (${oldServiceId})\n`,
    );
    const list = (await runCli(['svc', 'list'], box.env)).stdout.trim().split('\n');
    expect(list).toHaveLength(2);
    expect(list[0]).toMatch(/old-billing .* active {2}pre-checksum token: rotate$/);
    expect(list[1]).toMatch(/new-billing .* active$/);
  });

  it('forgets a service token once revoked', async () => {
    expect((await runCli(['svc', 'revoke', 'old-billing'], box.env)).code).toBe(0);
    const report = await cliJson<LegacyReport>(['legacy-tokens'], box.env);
    expect(report).toMatchObject({ service_tokens: 0, service_tokens_to_rotate: [] });
    expect((await runCli(['svc', 'list'], box.env)).stdout).not.toMatch(/rotate/);
  });
});
