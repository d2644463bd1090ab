import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliJson, cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';

function without(name: string, env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([variable]) => variable !== name));
}

const withoutPepper = (env: Record<string, string>) => without('SERVICE_PASSWORD_PEPPER', env);

/** API-DECISIONS 1: bad settings stop start-up with one line naming the variable. */
describe('tessera configuration', () => {
  let box: CliSandbox;
  beforeAll(() => {
    box = cliSandbox();
  });
  afterAll(() => box?.remove());

  describe('configuration errors', () => {
    it.each([
      ['SERVICE_PORT', 'abc'],
      ['SERVICE_PORT', '70000'],
      ['SERVICE_LOG_LEVEL', 'verbose'],
      ['SERVICE_SESSION_TTL_HOURS', '0'],
      ['SERVICE_ARGON2_MEMORY_KIB', '1024'],
      ['SERVICE_RATE_LIMIT_LOGIN_USERNAME', 'ten per minute'],
      ['SERVICE_PUBLIC_URL', 'ftp://example.org'],
      ['SERVICE_SHUTDOWN_TIMEOUT_MS', '-1'],
      ['SERVICE_PASSWORD_MIN_SCORE', '5'],
    ])('%s=%s exits non-zero with one line naming the variable', async (name, value) => {
      const result = await runCli(['svc', 'list'], { ...box.env, [name]: value });
      expect(result.code).not.toBe(0);
      expect(result.stdout).toBe('');
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(name);
    });

    it('an unknown command exits non-zero', async () => {
      const result = await runCli(['frobnicate'], box.env);
      expect(result.code).not.toBe(0);
      expect(result.stderr).toMatch(/unknown command/);
    });
  });

  describe('password pepper', () => {
    it('on the embedded default without a pepper, generates one once (0600) and warns', async () => {
      const env = withoutPepper(box.env);
      const file = join(box.dir, 'pepper');
      const first = await runCli(
        ['identity', 'create', '--username', 'peppered', '--password-stdin'],
        env,
        'a long enough password',
      );
      expect(first.code).toBe(0);
      expect(first.stderr).toMatch(/SERVICE_PASSWORD_PEPPER is unset: generated one into/);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const pepper = readFileSync(file, 'utf8');
      expect(pepper.trim()).toMatch(/^[A-Za-z0-9_-]{43}$/);

      const second = await runCli(['identity', 'show', 'peppered'], env);
      expect(second).toMatchObject({ code: 0, stderr: '' });
      expect(readFileSync(file, 'utf8')).toBe(pepper);
    });

    it('with PostgreSQL a pepper is required, and the message names the variable', async () => {
      const env = withoutPepper(box.env);
      const result = await runCli(['svc', 'list'], {
        ...env,
        SERVICE_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      });
      expect(result.code).not.toBe(0);
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('SERVICE_PASSWORD_PEPPER');
    });
  });

  describe('encryption key', () => {
    it('on the embedded default without a key, generates one once (0600) and warns', async () => {
      const env = without('SERVICE_ENCRYPTION_KEY', box.env);
      const file = join(box.dir, 'encryption-key');
      const first = await runCli(['svc', 'list'], env);
      expect(first.code).toBe(0);
      expect(first.stderr).toMatch(/SERVICE_ENCRYPTION_KEY is unset: generated one into/);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const key = readFileSync(file, 'utf8');
      const second = await runCli(['svc', 'list'], env);
      expect(second).toMatchObject({ code: 0, stderr: '' });
      expect(readFileSync(file, 'utf8')).toBe(key);
    });

    it('with PostgreSQL a key is required, and the message names the variable', async () => {
      const result = await runCli(['svc', 'list'], {
        ...without('SERVICE_ENCRYPTION_KEY', box.env),
        SERVICE_DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
      });
      expect(result.code).not.toBe(0);
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('SERVICE_ENCRYPTION_KEY');
    });
  });

  it('valid settings are accepted (decimal session lifetime, rate rules)', async () => {
    const listed = await cliJson<unknown[]>(['svc', 'list'], {
      ...box.env,
      SERVICE_SESSION_TTL_HOURS: '0.5',
      SERVICE_RATE_LIMIT_LOGIN_USERNAME: '3/1m',
      SERVICE_PORT: '65535',
    });
    expect(listed).toEqual([]);
  });
});
