import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueMail } from '../../src/domain/mail/message.js';
import { systemClock } from '../../src/lib/clock.js';
import { openStorage } from '../../src/storage/open.js';
import { cliJson, cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';

describe('tessera mail and mail settings', () => {
  let box: CliSandbox;
  let ids: string[];

  beforeAll(async () => {
    box = cliSandbox();
    const store = openStorage({ databaseUrl: box.databaseFile, timeoutMs: 5000, poolSize: 1 });
    await store.migrate();
    ids = [];
    for (const to of ['ada@example.com', 'bob@example.com']) {
      ids.push(
        await store.transaction((tx) =>
          enqueueMail(tx, systemClock, { to, template: 'sign_in_code', variables: { code: '1' } }),
        ),
      );
    }
    // The first one was refused for good.
    const [claimed] = await store.claimOutboxRecords({
      now: Date.now(),
      leaseMs: 1000,
      limit: 1,
      kinds: ['mail'],
      token: 't',
    });
    await store.settleOutboxRecord(claimed!.id, 't', { state: 'failed', error: '550 no' }, 0);
    await store.close();
  });
  afterAll(() => box.remove());

  it('`mail list` shows the queue, filtered by state, never the codes', async () => {
    const all = await cliJson<{ id: string; state: string }[]>(['mail', 'list'], box.env);
    expect(all.map((entry) => entry.id).sort()).toEqual([...ids].sort());
    expect(JSON.stringify(all)).not.toContain('"code"');
    const failed = await cliJson<{ id: string; last_error: string }[]>(
      ['mail', 'list', '--state', 'failed'],
      box.env,
    );
    expect(failed).toEqual([expect.objectContaining({ id: ids[0], last_error: '550 no' })]);
    const text = await runCli(['mail', 'list', '--state', 'failed'], box.env);
    expect(text.stdout).toContain(`${ids[0]}  failed`);
  });

  it('`mail retry` queues failed mail again and audits it; refuses what is not failed', async () => {
    const refused = await runCli(['mail', 'retry', ids[1]!], box.env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('not failed');
    const usage = await runCli(['mail', 'retry'], box.env);
    expect(usage.code).not.toBe(0);

    expect(await cliJson(['mail', 'retry', '--failed'], box.env)).toEqual({ requeued: [ids[0]] });
    expect(await cliJson(['mail', 'list', '--state', 'failed'], box.env)).toEqual([]);
    const audit = await cliJson<{ action: string; details: unknown }[]>(
      ['audit', 'list', '--action', 'mail_retry'],
      box.env,
    );
    expect(audit).toMatchObject([{ details: { ids: [ids[0]] } }]);
  });

  it('`mail list --state` refuses an unknown state', async () => {
    const result = await runCli(['mail', 'list', '--state', 'lost', '--json'], box.env);
    expect(result.code).not.toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ error: 'validation_error' });
  });

  it.each([
    ['SERVICE_SMTP_URL', 'http://user:secret@mail.example.com', 'secret'],
    ['SERVICE_SMTP_URL', 'smtp://user:secret@mail.example.com', 'SERVICE_MAIL_FROM'],
    ['SERVICE_MAIL_FROM', 'Ada <ada@example.com>\r\nBcc: x@y.z', 'SERVICE_MAIL_FROM'],
  ])('%s=%s stops start-up with one line', async (name, value, named) => {
    const result = await runCli(['mail', 'list'], { ...box.env, [name]: value });
    expect(result.code).not.toBe(0);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(name);
    if (named === 'secret') expect(lines[0]).not.toContain('secret');
    else expect(lines[0]).toContain(named);
  });
});
