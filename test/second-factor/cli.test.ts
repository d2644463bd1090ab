import { afterAll, beforeAll, expect, it } from 'vitest';
import { describe } from 'vitest';
import type { AuditEntry } from '../../src/domain/audit/audit.js';
import type { Identity } from '../../src/domain/identities/identity.js';
import { hashRecoveryCode } from '../../src/domain/second-factor/recovery-codes.js';
import { openStorage } from '../../src/storage/open.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { cliJson, cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';
import { identityRow } from '../helpers/records.js';

type Shown = {
  identity: Identity;
  second_factor: { enabled: boolean; since: string | null; recovery_codes_left: number };
};

/** `tessera identity second-factor` and `identity reset-second-factor`, as operators run them. */
describe('second-factor CLI', () => {
  let box: CliSandbox;
  let store: StoreHandle;
  const erin = identityRow({ username: 'erin' });

  beforeAll(async () => {
    box = cliSandbox();
    store = openStorage({ databaseUrl: box.databaseFile, timeoutMs: 5000, poolSize: 1 });
    await store.migrate();
    await store.insertIdentity(erin);
    await store.insertTotpFactor({
      identity_id: erin.id,
      secret_sealed: 'sb1.not-opened-by-these-commands',
      confirmed_at: Date.parse('2026-11-20T08:00:00.000Z'),
      last_used_step: null,
      created_at: Date.parse('2026-11-20T07:59:00.000Z'),
    });
    await store.replaceRecoveryCodes(erin.id, ['a', 'b', 'c'].map(hashRecoveryCode), 0);
    await store.useRecoveryCode(erin.id, hashRecoveryCode('b'), 1);
  });
  afterAll(async () => {
    await store?.close();
    box?.remove();
  });

  it('shows whether an identity has a second factor, by username or id', async () => {
    const shown = await cliJson<Shown>(['identity', 'second-factor', 'erin'], box.env);
    expect(shown.identity.id).toBe(erin.id);
    expect(shown.second_factor).toEqual({
      enabled: true,
      pending: false,
      methods: ['totp'],
      since: '2026-11-20T08:00:00.000Z',
      recovery_codes_left: 2,
    });
    const text = await runCli(['identity', 'second-factor', erin.id], box.env);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('second factor: on (totp) since 2026-11-20T08:00:00.000Z');
    expect(text.stdout).toContain('recovery codes left: 2');
  });

  it('resets it, audited as the cli; a second reset has nothing left to do', async () => {
    const reset = await cliJson<{ was_enabled: boolean }>(
      ['identity', 'reset-second-factor', 'erin'],
      box.env,
    );
    expect(reset.was_enabled).toBe(true);
    expect(await store.findTotpFactor(erin.id)).toBeUndefined();
    expect(await store.listUnusedRecoveryCodes(erin.id)).toEqual([]);
    const again = await runCli(['identity', 'reset-second-factor', 'erin'], box.env);
    expect(again.stdout).toContain('had no second factor');
    const audit = await cliJson<AuditEntry[]>(
      ['audit', 'list', '--action', 'identity_second_factor_reset'],
      box.env,
    );
    expect(
      audit.map((row) => [row.service_name, row.target_identity, row.details.was_enabled]),
    ).toEqual([
      ['cli', erin.id, false],
      ['cli', erin.id, true],
    ]);
    const unknown = await runCli(['identity', 'reset-second-factor', 'nobody'], box.env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/not_found/);
  });
});
