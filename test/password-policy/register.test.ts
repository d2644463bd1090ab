import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD_MESSAGES } from '../../src/domain/password-policy/policy.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';
import { expectValidation, uniqueName } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';

/** The policy as clients meet it: 422 `validation_error` with a sentence, nothing stored. */
describeEachDatabase('password policy over HTTP', (kind) => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await createTestApp(kind);
    token = await t.token('direct_auth');
  });
  afterAll(() => t?.close());

  describe.each(['/v1/register', '/v1/register-and-authenticate'])('%s', (url) => {
    it.each([
      ['a common password', { password: 'password123' }, PASSWORD_MESSAGES.common],
      ['a common password in capitals', { password: 'PASSWORD123' }, PASSWORD_MESSAGES.common],
      ['the username plus digits', { password: '{username}2024' }, PASSWORD_MESSAGES.names],
      [
        'the display name plus a year',
        { password: 'Grace Hopper 1906', display_name: 'Grace Hopper' },
        PASSWORD_MESSAGES.names,
      ],
      ['a decorated common password', { password: 'password2024' }, PASSWORD_MESSAGES.weak],
    ])('refuses %s with 422 and what to do', async (_label, fields, message) => {
      const username = uniqueName();
      const password = fields.password.replace('{username}', username);
      const res = await t.call('POST', url, token, { username, ...fields, password });
      expectValidation(res, message);
      expect(res.body).not.toContain(password);
      expect(await t.deps.store.findIdentityByUsername(username)).toBeUndefined();
    });

    it('accepts a passphrase', async () => {
      const res = await t.call('POST', url, token, {
        username: uniqueName(),
        password: 'violet tractor umbrella',
      });
      expect(res.statusCode).toBe(201);
    });
  });

  it('SERVICE_PASSWORD_MIN_SCORE=0 turns the estimate off, not the list', async () => {
    const lenient = await createTestApp(kind, { SERVICE_PASSWORD_MIN_SCORE: '0' });
    try {
      const all = await lenient.token('direct_auth');
      const register = (password: string) =>
        lenient.call('POST', '/v1/register', all, { username: uniqueName(), password });
      expect((await register('password2024')).statusCode).toBe(201);
      expectValidation(await register('password123'), PASSWORD_MESSAGES.common);
    } finally {
      await lenient.close();
    }
  });
});

describe('password policy in the CLI', () => {
  let box: CliSandbox;
  beforeAll(() => {
    box = cliSandbox();
  });
  afterAll(() => box?.remove());

  it('identity create refuses a common password with the same sentence', async () => {
    const result = await runCli(
      ['identity', 'create', '--username', 'dave', '--password-stdin'],
      box.env,
      'password123\n',
    );
    expect(result).toMatchObject({
      code: 2,
      stderr: `tessera: validation_error: ${PASSWORD_MESSAGES.common}\n`,
    });
  });
});
