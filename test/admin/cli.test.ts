import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/domain/audit/audit.js';
import type { Identity } from '../../src/domain/identities/identity.js';
import { cliJson, cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';

const PASSWORD = 'a long enough password';

/** `tessera admin grant|revoke|list` (docs/admin.md), as users run it. */
describe('tessera admin', { timeout: 180_000 }, () => {
  let box: CliSandbox;
  let alice: Identity;

  beforeAll(async () => {
    box = cliSandbox();
    alice = await cliJson<Identity>(
      ['identity', 'create', '--username', 'alice', '--password-stdin'],
      box.env,
      PASSWORD,
    );
  });
  afterAll(() => box?.remove());

  it('grants by username, lists, revokes by id; each change audited with the cli actor', async () => {
    expect(await cliJson(['admin', 'list'], box.env)).toEqual([]);

    const granted = await cliJson<{ identity: Identity; changed: boolean }>(
      ['admin', 'grant', 'alice'],
      box.env,
    );
    expect(granted).toEqual({ identity: alice, changed: true });
    const again = await cliJson<{ changed: boolean }>(['admin', 'grant', alice.id], box.env);
    expect(again.changed).toBe(false);

    const listed = await cliJson<{ identity: Identity; granted_at: string }[]>(
      ['admin', 'list'],
      box.env,
    );
    expect(listed).toEqual([{ identity: alice, granted_at: expect.any(String) }]);

    const plain = await runCli(['admin', 'list'], box.env);
    expect(plain.stdout).toContain(`${alice.id}  alice  active  granted `);

    const revoked = await runCli(['admin', 'revoke', alice.id], box.env);
    expect(revoked).toMatchObject({
      code: 0,
      stdout: `alice (${alice.id}) is no longer an operator\n`,
    });
    expect(await cliJson(['admin', 'list'], box.env)).toEqual([]);

    const audit = await cliJson<AuditEntry[]>(
      ['audit', 'list', '--action', 'operator_grant', '--action', 'operator_revoke'],
      box.env,
    );
    expect(audit.map((entry) => [entry.action, entry.details.changed])).toEqual([
      ['operator_revoke', true],
      ['operator_grant', false],
      ['operator_grant', true],
    ]);
    for (const entry of audit) {
      expect(entry).toMatchObject({ service_name: 'cli', target_identity: alice.id });
    }
  });

  it('tessera db copy carries the role', async () => {
    await cliJson(['admin', 'grant', 'alice'], box.env);
    const target = join(box.dir, 'copy', 'tessera.db');
    await cliJson(['db', 'copy', '--to', `sqlite:${target}`], box.env);
    const copied = await cliJson<{ identity: Identity }[]>(['admin', 'list'], {
      ...box.env,
      SERVICE_DATABASE_URL: target,
    });
    expect(copied.map((operator) => operator.identity.username)).toEqual(['alice']);
    await cliJson(['admin', 'revoke', 'alice'], box.env);
  });

  it('refuses an unknown identity with not_found and changes nothing', async () => {
    const result = await runCli(['admin', 'grant', 'nobody', '--json'], box.env);
    expect(result.code).not.toBe(0);
    expect(JSON.parse(result.stderr || result.stdout)).toMatchObject({ error: 'not_found' });
    expect(await cliJson(['admin', 'list'], box.env)).toEqual([]);
  });
});
