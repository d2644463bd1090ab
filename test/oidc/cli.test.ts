import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../src/domain/audit/audit.js';
import type { OidcClientView } from '../../src/domain/oidc/client.js';
import type { KeyView } from '../../src/domain/oidc/signing-keys.js';
import { hashToken } from '../../src/lib/tokens.js';
import { cliJson, cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';

/** `tessera oidc ...` as operators run it, on SQLite. */
describe('tessera oidc', { timeout: 120_000 }, () => {
  let box: CliSandbox;
  beforeAll(() => {
    box = cliSandbox();
  });
  afterAll(() => box?.remove());

  it('creates a confidential client: the secret printed once, only its digest stored', async () => {
    const created = await cliJson<OidcClientView & { client_secret: string }>(
      [
        'oidc',
        'client',
        'create',
        '--name',
        'Grafana',
        '--redirect-uri',
        'https://grafana.example/login/generic_oauth',
        '--redirect-uri',
        'https://grafana2.example/login/generic_oauth',
        '--first-party',
      ],
      box.env,
    );
    expect(created).toMatchObject({
      name: 'Grafana',
      type: 'confidential',
      first_party: true,
      token_endpoint_auth_method: 'client_secret_basic',
      redirect_uris: [
        'https://grafana.example/login/generic_oauth',
        'https://grafana2.example/login/generic_oauth',
      ],
      revoked_at: null,
      secret_format: 'crc32',
    });
    expect(created.client_secret).toMatch(/^tess_ocs_[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/);
    const db = new BetterSqlite3(box.databaseFile, { readonly: true });
    const row = db.prepare('SELECT * FROM oidc_clients WHERE id = ?').get(created.client_id) as {
      secret_hash: string;
    };
    db.close();
    expect(row.secret_hash).toBe(`crc32:${hashToken(created.client_secret)}`);

    const text = await runCli(
      [
        'oidc',
        'client',
        'create',
        '--name',
        'GitLab',
        '--redirect-uri',
        'https://gitlab.example/users/auth/openid_connect/callback',
        '--token-endpoint-auth-method',
        'client_secret_post',
      ],
      box.env,
    );
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^client_id: \S+$/m);
    expect(text.stdout).toMatch(/^client_secret \(shown once\): tess_ocs_\S+$/m);
  });

  it('creates a public client without a secret; refuses bad input with one line', async () => {
    const created = await cliJson<Record<string, unknown>>(
      [
        'oidc',
        'client',
        'create',
        '--name',
        'SPA',
        '--redirect-uri',
        'http://localhost:5173/cb',
        '--public',
      ],
      box.env,
    );
    expect(created).toMatchObject({
      type: 'public',
      first_party: false,
      token_endpoint_auth_method: 'none',
      secret_format: null,
    });
    expect(created).not.toHaveProperty('client_secret');

    const refused = [
      ['--name', 'X'],
      ['--name', 'X', '--redirect-uri', 'not a url'],
      ['--name', 'X', '--redirect-uri', 'https://x.example/cb#frag'],
      ['--name', 'X', '--redirect-uri', 'javascript:alert(1)'],
      [
        '--name',
        'X',
        '--redirect-uri',
        'https://x.example/cb',
        '--public',
        '--token-endpoint-auth-method',
        'client_secret_basic',
      ],
      [
        '--name',
        'X',
        '--redirect-uri',
        'https://x.example/cb',
        '--token-endpoint-auth-method',
        'private_key_jwt',
      ],
    ];
    // One process each, side by side: every start of the CLI costs seconds on a busy host.
    const results = await Promise.all(
      refused.map((args) => runCli(['oidc', 'client', 'create', ...args], box.env)),
    );
    results.forEach((result, index) => {
      expect(result.code, refused[index]!.join(' ')).not.toBe(0);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(/^tessera: validation_error: /);
    });
  });

  it('lists and revokes clients, and audits each action', async () => {
    const list = await cliJson<OidcClientView[]>(['oidc', 'client', 'list'], box.env);
    expect(list.map((client) => client.name)).toEqual(['Grafana', 'GitLab', 'SPA']);
    const revoked = await cliJson<OidcClientView>(
      ['oidc', 'client', 'revoke', list[2]!.client_id],
      box.env,
    );
    expect(revoked.revoked_at).not.toBeNull();
    const unknown = await runCli(['oidc', 'client', 'revoke', 'no-such-client'], box.env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/not_found/);

    const audit = await cliJson<AuditEntry[]>(['audit', 'list', '--limit', '20'], box.env);
    const actions = audit.map((entry) => entry.action);
    expect(actions.filter((action) => action === 'oidc_client_create')).toHaveLength(3);
    expect(audit.find((entry) => entry.action === 'oidc_client_revoke')).toMatchObject({
      service_name: 'cli',
      details: { client_id: list[2]!.client_id, name: 'SPA' },
    });
    expect(JSON.stringify(audit)).not.toContain('tess_ocs_');
  });

  it('rotates and lists signing keys: the first signs at once, later ones after the delay', async () => {
    expect(await cliJson<KeyView[]>(['oidc', 'keys', 'list'], box.env)).toEqual([]);
    const first = await cliJson<KeyView>(['oidc', 'keys', 'rotate'], box.env);
    const second = await cliJson<KeyView>(['oidc', 'keys', 'rotate'], box.env);
    expect([first.state, second.state]).toEqual(['active', 'next']);
    expect(Date.parse(second.activates_at) - Date.parse(second.created_at)).toBe(5 * 60_000);
    const keys = await cliJson<KeyView[]>(['oidc', 'keys', 'list'], box.env);
    expect(keys.map((key) => [key.kid, key.state])).toEqual([
      [first.kid, 'active'],
      [second.kid, 'next'],
    ]);
    const db = new BetterSqlite3(box.databaseFile, { readonly: true });
    const sealed = db.prepare('SELECT sealed_private_jwk FROM oidc_signing_keys').all() as {
      sealed_private_jwk: string;
    }[];
    db.close();
    // Sealed by the secret box: no private key material in the clear.
    for (const row of sealed) expect(row.sealed_private_jwk).toMatch(/^sb1\./);
    const audit = await cliJson<AuditEntry[]>(['audit', 'list', '--limit', '5'], box.env);
    expect(audit.filter((entry) => entry.action === 'oidc_key_rotate')).toHaveLength(2);
    const text = await runCli(['oidc', 'keys', 'list'], box.env);
    expect(text.stdout).toContain(`${first.kid}  RS256  active`);
  });
});
