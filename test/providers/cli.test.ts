import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliJson, cliSandbox, runCli, type CliSandbox } from '../helpers/cli.js';
import { startFakeIssuer, type FakeIssuer } from './fake-upstreams.js';
import { providersFile } from './helpers.js';

describe('tessera provider list', () => {
  let sandbox: CliSandbox;
  let issuer: FakeIssuer;
  let env: Record<string, string>;

  beforeAll(async () => {
    sandbox = cliSandbox();
    issuer = await startFakeIssuer();
    const file = providersFile([
      {
        id: 'corp',
        type: 'oidc',
        label: 'Corp SSO',
        issuer: issuer.issuer,
        client_id: 'c',
        client_secret_env: 'S',
      },
      // Nothing listens there: discovery fails, and says so.
      {
        id: 'gone',
        type: 'oidc',
        issuer: 'http://127.0.0.1:9/',
        client_id: 'c',
        client_secret_env: 'S',
      },
      { id: 'github', type: 'github', client_id: 'g', client_secret_env: 'S' },
    ]);
    env = {
      ...sandbox.env,
      SERVICE_PROVIDERS_FILE: file,
      S: 'secret',
      SERVICE_PUBLIC_URL: 'https://id.example.com',
    };
  });
  afterAll(async () => {
    sandbox?.remove();
    await issuer?.close();
  });

  it('shows each provider, its discovery state and the redirect URI to register', async () => {
    const rows = await cliJson<
      { id: string; discovery: { state: string }; redirect_uri: string }[]
    >(['provider', 'list'], env);
    expect(rows.map((row) => [row.id, row.discovery.state, row.redirect_uri])).toEqual([
      ['corp', 'ok', 'https://id.example.com/v1/providers/corp/callback'],
      ['gone', 'failed', 'https://id.example.com/v1/providers/gone/callback'],
      ['github', 'ok', 'https://id.example.com/v1/providers/github/callback'],
    ]);
    const text = await runCli(['provider', 'list'], env);
    expect(text.stdout).toContain(`corp  oidc  ok ${issuer.issuer}`);
    expect(text.stdout).toMatch(/gone {2}oidc {2}failed: /);
  });

  it('stops with the file’s error, naming the provider and field', async () => {
    const file = providersFile([
      {
        id: 'corp',
        type: 'oidc',
        issuer: issuer.issuer,
        client_id: 'c',
        client_secret_env: 'MISSING',
      },
    ]);
    const result = await runCli(['provider', 'list'], {
      ...sandbox.env,
      SERVICE_PROVIDERS_FILE: file,
    });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(
      'provider "corp": client_secret_env names MISSING, which is not set',
    );
  });
});
