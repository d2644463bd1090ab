import { afterAll, beforeAll, expect, it } from 'vitest';
import { setIdentityState } from '../../src/domain/identities/identity-service.js';
import {
  assertExportable,
  parseExportOptions,
} from '../../src/domain/identity-transfer/export-identities.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { httpClient } from '../helpers/http-sign-in.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import { LOOSE_SIGN_IN_LIMITS, PASSWORD, addIdentity, operator } from '../flows/helpers.js';
import { freePort } from '../oidc/helpers.js';
import { totpCode } from '../second-factor/helpers.js';

const REFUSAL =
  '1 identity has TOTP, 1 has recovery codes, 1 has passkeys: an export cannot carry them; to move a database use `tessera db copy`, or pass --without-credentials to export without them';

/**
 * `identity export` writes identities, password hashes and links, and has no place for
 * second factors or passkeys: it refuses to leave them behind unless told to
 * (docs/import-export.md).
 */
describeEachDatabase('identity export and credentials it cannot carry', (kind) => {
  let t: TestApp;

  beforeAll(async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    t = await createTestApp(kind, { ...LOOSE_SIGN_IN_LIMITS, SERVICE_PUBLIC_URL: origin });
    await t.app.listen({ port, host: '127.0.0.1' });
    const http = httpClient(origin);
    for (const username of ['alice', 'bob', 'carol', 'dave']) await addIdentity(t, username);
    // alice: TOTP and its recovery codes.
    const alice = http.sessionOf((await http.password('alice', PASSWORD)).answer);
    const secret = await http.startTotp(alice);
    await http.confirmTotp(alice, await totpCode(secret, t.clock.now()));
    // bob: two passkeys (one identity all the same); the second needs a passkey sign-in.
    const first = new SoftAuthenticator();
    await http.registerPasskey(
      http.sessionOf((await http.password('bob', PASSWORD)).answer),
      first,
    );
    await http.registerPasskey(http.sessionOf(await http.passkey(first)), new SoftAuthenticator());
    // carol: a TOTP enrolment never confirmed is no credential.
    const carol = http.sessionOf((await http.password('carol', PASSWORD)).answer);
    await http.startTotp(carol);
    await setIdentityState(t.deps, operator, 'dave', 'disabled');
  });
  afterAll(() => t?.close());

  it('refuses an export that would leave credentials behind, counting identities', async () => {
    await expect(assertExportable(t.deps, parseExportOptions({}))).rejects.toMatchObject({
      code: 'validation_error',
      message: REFUSAL,
    });
    await expect(
      assertExportable(t.deps, parseExportOptions({ state: 'active' })),
    ).rejects.toMatchObject({ message: REFUSAL });
  });

  it('exports identities without credentials, or with --without-credentials', async () => {
    await expect(
      assertExportable(t.deps, parseExportOptions({ state: 'disabled' })),
    ).resolves.toBeUndefined();
    await expect(
      assertExportable(t.deps, parseExportOptions({ withoutCredentials: true })),
    ).resolves.toBeUndefined();
  });

  if (kind !== 'sqlite') return;

  it('tessera identity export: one line naming what it cannot carry, exit 2, nothing written', async () => {
    const env = {
      SERVICE_DATABASE_URL: t.db.file!,
      SERVICE_PASSWORD_PEPPER: 'test-pepper',
      SERVICE_ENCRYPTION_KEY: 'test-encryption-key',
      SERVICE_LOG_LEVEL: 'silent',
    };
    const refused = await runCli(['identity', 'export', '--include-password-hashes'], env);
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(`tessera: validation_error: ${REFUSAL}\n`);

    const exported = await runCli(
      ['identity', 'export', '--include-password-hashes', '--without-credentials'],
      env,
    );
    expect(exported.code, exported.stderr).toBe(0);
    const lines = exported.stdout.trim().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as { username: string }).username).sort()).toEqual(
      ['alice', 'bob', 'carol', 'dave'],
    );
  });
});
