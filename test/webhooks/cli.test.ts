import { afterEach, beforeEach, expect, it } from 'vitest';
import { cliJson, cliSandbox, runCli, type CliSandbox } from '../helpers/cli.js';

let sandbox: CliSandbox;
beforeEach(() => {
  sandbox = cliSandbox();
});
afterEach(() => sandbox.remove());

interface Created {
  webhook: { id: string; url: string; events: string[] };
  secret: string;
}

it('create prints the secret once; list never shows it; delete removes the webhook', async () => {
  const url = 'https://93.184.215.14/hook';
  const created = await cliJson<Created>(
    ['webhook', 'create', '--url', url, '--events', 'identity.created,sign_in.failed'],
    sandbox.env,
  );
  expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  expect(created.webhook).toMatchObject({ url, events: ['identity.created', 'sign_in.failed'] });

  const listed = await runCli(['webhook', 'list'], sandbox.env);
  expect(listed.stdout).toContain(created.webhook.id);
  expect(listed.stdout).not.toContain(created.secret);
  expect(await cliJson(['webhook', 'list'], sandbox.env)).toHaveLength(1);

  await cliJson(['webhook', 'delete', created.webhook.id], sandbox.env);
  expect(await cliJson(['webhook', 'list'], sandbox.env)).toEqual([]);
  const again = await runCli(['webhook', 'delete', created.webhook.id], sandbox.env);
  expect(again.code).toBe(1);
  const audit = await cliJson<{ action: string }[]>(['audit', 'list'], sandbox.env);
  expect(audit.map((entry) => entry.action)).toEqual(
    expect.arrayContaining(['webhook_create', 'webhook_delete']),
  );
});

it('refuses a loopback URL unless SERVICE_WEBHOOK_ALLOW_PRIVATE=on', async () => {
  const args = [
    'webhook',
    'create',
    '--url',
    'http://localhost:9/',
    '--events',
    'identity.created',
  ];
  const refused = await runCli(args, sandbox.env);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toContain('SERVICE_WEBHOOK_ALLOW_PRIVATE=on');
  const allowed = await runCli(args, { ...sandbox.env, SERVICE_WEBHOOK_ALLOW_PRIVATE: 'on' });
  expect(allowed.code).toBe(0);
});
