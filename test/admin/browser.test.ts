import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { setIdentityEmail } from '../../src/domain/identities/identity-email.js';
import { registerIdentity } from '../../src/domain/identities/identity-service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  describeInChromium,
  sharedChromium,
  releaseChromium,
  listenForBrowser,
} from '../helpers/chromium.js';
import { PASSWORD, addIdentity } from '../flows/helpers.js';
import { enrolledIdentity, totpCode, STEP_MS } from '../second-factor/helpers.js';
import { CLI_ACTOR, auditRows, operatorAtAal2 } from './helpers.js';

const SCREENSHOTS = 'test-results';
const HOSTILE_NAME = '<img src=x onerror=alert(1)><script>alert("pwned")</script>';

/** Issue 25, "Done when": every console page walked in Chromium, with script off. */
describeInChromium('admin console in Chromium', () => {
  let t: TestApp;
  let tessera: string;
  let browser: Browser;
  let root: Awaited<ReturnType<typeof operatorAtAal2>>;

  beforeAll(async () => {
    t = await createTestApp('sqlite');
    tessera = await listenForBrowser(t);
    browser = await sharedChromium();
    mkdirSync(SCREENSHOTS, { recursive: true });
    root = await operatorAtAal2(t);
  });
  afterAll(async () => {
    await releaseChromium(browser);
    await t?.close();
  });

  /** A browser profile of its own, script off, holding `session` as its cookie if given. */
  async function device(session?: string): Promise<Page> {
    const context = await browser.newContext({ javaScriptEnabled: false, acceptDownloads: true });
    context.setDefaultTimeout(5_000);
    if (session) {
      await context.addCookies([{ name: 'service_session', value: session, url: tessera }]);
    }
    return context.newPage();
  }

  it('sends a signed-out browser to the login page', async () => {
    const page = await device();
    await page.goto(`${tessera}/v1/admin`);
    expect(await page.title()).toBe('Sign in · Tessera');
  });

  it('refuses a non-operator (403) and an operator at aal1, whose sign-in link steps up', async () => {
    await addIdentity(t, 'bob');
    const visitor = await device();
    await visitor.goto(`${tessera}/v1/login`);
    await visitor.getByLabel('Username').fill('bob');
    await visitor.getByLabel('Password').fill(PASSWORD);
    await visitor.getByRole('button', { name: 'Sign in' }).click();
    const refused = await visitor.goto(`${tessera}/v1/admin`);
    expect(refused?.status()).toBe(403);
    expect(await visitor.locator('h1').textContent()).toBe('Not an operator');

    // root at aal1 (its TOTP enrolment session), then through the login with a code.
    const page = await device(root.aal1);
    const stepUp = await page.goto(`${tessera}/v1/admin/audit`);
    expect(stepUp?.status()).toBe(403);
    expect(await page.locator('h1').textContent()).toBe('Sign in with your second factor');
    await page.getByRole('link', { name: 'Sign in again' }).click();
    await page.getByLabel('Username').fill('root');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    t.clock.advance(STEP_MS);
    await page
      .getByLabel('Code from your authenticator app')
      .fill(await totpCode(root.secret, t.clock.now()));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(`${tessera}/v1/admin/audit`);
    expect(await page.locator('h1').textContent()).toBe('Audit log');
  });

  it('walks the console as an operator at aal2, performs each action, the audit rows name the operator', async () => {
    const mallory = await registerIdentity(t.deps, CLI_ACTOR, {
      username: 'mallory',
      password: PASSWORD,
      display_name: HOSTILE_NAME,
    });
    const victim = await enrolledIdentity(t, 'victim');
    await setIdentityEmail(t.deps, CLI_ACTOR, victim.identity.id, { email: 'victim@example.com' });
    const page = await device(root.session);
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });

    await page.goto(`${tessera}/v1/admin`);
    expect(await page.title()).toBe('Overview · Tessera admin');
    expect(await page.locator('svg[role=img]').count()).toBe(3);
    await page.screenshot({ path: `${SCREENSHOTS}/admin-overview.png`, fullPage: true });
    await page.getByRole('link', { name: 'Identities', exact: true }).first().click();
    expect(await page.locator('h1').textContent()).toBe('Identities');

    // Markup in a display name is text: shown as typed, no element made of it.
    const row = page.getByRole('row', { name: /mallory/ });
    expect(await row.getByRole('cell').nth(1).textContent()).toBe(HOSTILE_NAME);
    expect(await page.locator('img').count()).toBe(0);
    await page.getByRole('link', { name: 'mallory' }).click();
    expect(await page.locator('h1').textContent()).toBe(HOSTILE_NAME);
    expect(await page.title()).toBe(`${HOSTILE_NAME} · Tessera admin`);
    expect(page.url()).toBe(`${tessera}/v1/admin/identities/${mallory.id}`);

    // Search by keyboard: type into the field, Enter submits.
    await page.getByRole('link', { name: 'Identities', exact: true }).first().click();
    await page.getByLabel('Username or id').fill('vict');
    await page.getByLabel('Username or id').press('Enter');
    expect(await page.getByRole('row').count()).toBe(2);
    await page.getByRole('link', { name: 'victim' }).click();
    expect(await page.locator('#second-factor').textContent()).toContain('Authenticator app');

    const actions: [string, string, string, string][] = [
      [
        'Mark the email address verified',
        'email-verified',
        'Its email address is now verified.',
        'identity_set_email',
      ],
      [
        'End all sessions (1)',
        'sessions-ended',
        'Its sessions were ended.',
        'identity_revoke_sessions',
      ],
      ['Remove all passkeys (0)', 'passkeys-reset', 'Its passkeys were removed.', 'passkeys_reset'],
      [
        'Remove the second factor',
        'second-factor-reset',
        'Its second factor was removed.',
        'identity_second_factor_reset',
      ],
      ['Disable', 'disabled', 'The identity was disabled.', 'identity_disable'],
      ['Enable', 'enabled', 'The identity was enabled.', 'identity_enable'],
    ];
    for (const [button, done, notice, action] of actions) {
      // Keyboard: focus the button, press Enter.
      await page.getByRole('button', { name: button }).focus();
      await page.keyboard.press('Enter');
      await page.waitForURL(`${tessera}/v1/admin/identities/${victim.identity.id}?done=${done}`);
      expect(await page.getByRole('status').textContent()).toBe(notice);
      const rows = await auditRows(t, action);
      expect(rows.at(-1)).toMatchObject({
        service_name: 'admin',
        service_id: root.identity.id,
        target_identity: victim.identity.id,
      });
    }
    expect(await page.locator('#second-factor').textContent()).toContain('No authenticator app');
    expect(await page.locator('#profile').textContent()).toContain('victim@example.com (verified)');
    await page.screenshot({ path: `${SCREENSHOTS}/admin-identity.png`, fullPage: true });

    // The audit log, filtered by its form, then exported.
    await page.getByRole('link', { name: 'All its audit events' }).click();
    await page.getByLabel('Actor').fill('admin');
    await page.getByLabel('Action').fill('identity_disable');
    await page.getByRole('button', { name: 'Filter' }).click();
    const events = page.locator('table.audit tbody tr');
    expect(await events.count()).toBe(1);
    expect(await events.first().textContent()).toContain('admin: root');
    await page.screenshot({ path: `${SCREENSHOTS}/admin-audit.png`, fullPage: true });
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Export these events as CSV' }).click(),
    ]);
    const csv = await (await download.createReadStream()).toArray();
    const lines = Buffer.concat(csv).toString('utf8').trimEnd().split('\r\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(',identity_disable,admin,');

    // Service tokens: created with a grant, shown once, then revoked.
    await page.getByRole('link', { name: 'Service tokens' }).first().click();
    await page.getByLabel('Name').fill('reports');
    await page.getByLabel('identity_read').check();
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = await page.locator('#created-token').textContent();
    expect((await t.call('GET', '/v1/identities?username=root', token)).statusCode).toBe(200);
    await page.getByRole('button', { name: 'Revoke reports' }).click();
    await page.waitForURL(`${tessera}/v1/admin/service-tokens?done=revoked`);
    expect(await page.getByRole('status').textContent()).toBe('The service token was revoked.');
    expect((await t.call('GET', '/v1/identities?username=root', token)).statusCode).toBe(401);
    for (const action of ['svc_create', 'svc_revoke']) {
      expect((await auditRows(t, action)).at(-1)).toMatchObject({
        service_name: 'admin',
        service_id: root.identity.id,
      });
    }

    // OpenID Connect: a client registered (secret shown once) and revoked, a key rotated.
    await page.getByRole('link', { name: 'OIDC clients' }).first().click();
    await page.getByLabel('Name').fill('Reports');
    await page
      .getByLabel('Redirect URIs', { exact: true })
      .fill('https://reports.example/callback');
    await page.getByRole('button', { name: 'Register client' }).click();
    expect(await page.locator('#created-secret').textContent()).toMatch(/\S{20,}/);
    await page.getByRole('button', { name: 'Revoke Reports' }).click();
    await page.waitForURL(`${tessera}/v1/admin/oidc?done=revoked`);
    await page.getByRole('button', { name: 'Rotate signing key' }).click();
    await page.waitForURL(`${tessera}/v1/admin/oidc?done=rotated`);
    expect(await page.locator('#signing-keys tbody tr').count()).toBe(1);
    for (const action of ['oidc_client_create', 'oidc_client_revoke', 'oidc_key_rotate']) {
      expect((await auditRows(t, action)).at(-1)).toMatchObject({
        service_name: 'admin',
        service_id: root.identity.id,
      });
    }
    expect(dialogs).toEqual([]);
  });
});
