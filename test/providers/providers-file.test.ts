import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

const dir = mkdtempSync(join(tmpdir(), 'tessera-providers-'));
let count = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function load(document: unknown, env: Record<string, string> = {}) {
  count += 1;
  const file = join(dir, `providers-${count}.json`);
  writeFileSync(file, typeof document === 'string' ? document : JSON.stringify(document));
  return loadConfig({ SERVICE_PROVIDERS_FILE: file, ...env });
}

const corp = {
  id: 'corp',
  type: 'oidc',
  issuer: 'https://sso.example.com/realms/main',
  client_id: 'tessera',
  client_secret_env: 'CORP_SECRET',
};

describe('SERVICE_PROVIDERS_FILE', () => {
  it('reads each entry with its preset defaults and the secret from the variable named', () => {
    const config = load(
      {
        providers: [
          corp,
          { id: 'github', type: 'github', client_id: 'gh', client_secret_env: 'GH_SECRET' },
          {
            id: 'ms',
            type: 'microsoft',
            tenant: '0B6F1F4C-1111-4F44-9F5A-0123456789AB',
            client_id: 'm',
            client_secret_env: 'MS_SECRET',
          },
        ],
      },
      { CORP_SECRET: 's1', GH_SECRET: 's2', MS_SECRET: 's3' },
    );
    expect(config.providers.map((p) => [p.id, p.label, p.clientSecret, p.trustEmail])).toEqual([
      ['corp', 'corp', 's1', false],
      ['github', 'GitHub', 's2', true],
      ['ms', 'Microsoft', 's3', false],
    ]);
    expect(config.providers[0]!.scopes).toEqual(['openid', 'email', 'profile']);
    expect(config.providers[1]!.baseUrl).toBe('https://github.com');
    expect(config.providers[2]!.issuer).toBe(
      'https://login.microsoftonline.com/0b6f1f4c-1111-4f44-9f5a-0123456789ab/v2.0',
    );
  });

  it('is optional: no file, no providers', () => {
    expect(loadConfig({}).providers).toEqual([]);
  });

  it.each([
    ['{not json', {}, /SERVICE_PROVIDERS_FILE=.* cannot be used: not JSON/],
    [{ providers: [{ ...corp, id: 'Corp' }] }, { CORP_SECRET: 'x' }, /providers\[0\]: id must be/],
    [
      { providers: [corp] },
      {},
      /provider "corp": client_secret_env names CORP_SECRET, which is not set/,
    ],
    [
      { providers: [{ ...corp, issuer: 'http://sso.example.com' }] },
      { CORP_SECRET: 'x' },
      /provider "corp": issuer must be an https URL/,
    ],
    [
      { providers: [{ ...corp, type: 'okta' }] },
      {},
      /provider "corp": type must be one of oidc, google/,
    ],
    [
      { providers: [{ ...corp, base_url: 'https://x' }] },
      { CORP_SECRET: 'x' },
      /provider "corp": base_url is not a field of a "oidc" provider/,
    ],
    [
      { providers: [{ ...corp, scopes: ['email'] }] },
      { CORP_SECRET: 'x' },
      /provider "corp": scopes must include "openid"/,
    ],
    [{ providers: [corp, corp] }, { CORP_SECRET: 'x' }, /provider "corp": id is used twice/],
    [
      {
        providers: [
          { id: 'ms', type: 'microsoft', tenant: 'common', client_id: 'm', client_secret_env: 'S' },
        ],
      },
      { S: 'x' },
      /provider "ms": tenant must be the directory \(tenant\) id/,
    ],
    [
      {
        providers: [
          {
            id: 'apple',
            type: 'apple',
            client_id: 'svc',
            team_id: 'T',
            key_id: 'K',
            private_key_env: 'APPLE_KEY',
          },
        ],
      },
      {},
      /provider "apple": private_key_env names APPLE_KEY, which is not set/,
    ],
  ])('refuses %j at start-up, naming the provider and field', (document, env, message) => {
    expect(() => load(document, env)).toThrow(message);
  });

  it('refuses a file it cannot read', () => {
    expect(() => loadConfig({ SERVICE_PROVIDERS_FILE: join(dir, 'missing.json') })).toThrow(
      /cannot be used: the file cannot be read \(ENOENT\)/,
    );
  });

  it('accepts plain http only on a loopback host', () => {
    const config = load(
      { providers: [{ ...corp, issuer: 'http://127.0.0.1:9999/oidc' }] },
      { CORP_SECRET: 'x' },
    );
    expect(config.providers[0]!.allowHttp).toBe(true);
  });
});
