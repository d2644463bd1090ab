import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listMail } from '../../src/domain/outbox/outbox-admin.js';
import { hashRecoveryCode } from '../../src/domain/second-factor/recovery-codes.js';
import { openStorage } from '../../src/storage/open.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';
import { identityRow } from '../helpers/records.js';

const NEW_PASSWORD = 'violet kettle drums sideways 42';

/** The operator's commands queue the same notices (`tessera serve`'s worker sends them). */
describe('security notices from the CLI', { timeout: 180_000 }, () => {
  let box: CliSandbox;
  let store: StoreHandle;
  const erin = identityRow({
    username: 'erin',
    email: 'erin@example.com',
    email_verified_at: Date.parse('2026-11-20T07:00:00.000Z'),
  });

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
    await store.replaceRecoveryCodes(erin.id, ['a', 'b'].map(hashRecoveryCode), 0);
  });
  afterAll(async () => {
    await store?.close();
    box?.remove();
  });

  const queued = async () =>
    (await listMail(store, {})).map((mail) => [mail.template, mail.to]).reverse();

  it('identity reset-second-factor and set-password each queue one notice', async () => {
    const reset = await runCli(['identity', 'reset-second-factor', 'erin'], box.env);
    expect(reset.code, reset.stderr).toBe(0);
    expect(await queued()).toEqual([['second_factor_disabled', 'erin@example.com']]);

    const set = await runCli(
      ['identity', 'set-password', 'erin', '--password-stdin'],
      box.env,
      `${NEW_PASSWORD}\n`,
    );
    expect(set.code, set.stderr).toBe(0);
    expect(await queued()).toEqual([
      ['second_factor_disabled', 'erin@example.com'],
      ['password_changed', 'erin@example.com'],
    ]);
  });

  it('SERVICE_MAIL_NOTICES=none queues none', async () => {
    const before = (await listMail(store, {})).length;
    const set = await runCli(
      ['identity', 'set-password', 'erin', '--password-stdin'],
      {
        ...box.env,
        SERVICE_MAIL_NOTICES: 'none',
      },
      `${NEW_PASSWORD}!\n`,
    );
    expect(set.code, set.stderr).toBe(0);
    expect(await listMail(store, {})).toHaveLength(before);
  });
});
