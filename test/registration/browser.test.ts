import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { OutboxWorker } from '../../src/domain/outbox/outbox-worker.js';
import { type TestApp, createTestApp } from '../helpers/app.js';
import {
  describeInChromium,
  sharedChromium,
  releaseChromium,
  listenForBrowser,
} from '../helpers/chromium.js';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp.js';
import { LOOSE_SIGN_IN_LIMITS } from '../flows/helpers.js';
import { courierFor } from '../verification/helpers.js';
import { STRONG, uniqueUser } from './helpers.js';

/**
 * Issue 23 item 3 in a real browser, against a real SMTP server: sign up on the hosted
 * page with an address, read the code from the mail, verify, sign in; and sign up with a
 * passkey (Chromium's virtual authenticator) instead of a password. Verified addresses are
 * required here, so signing in before the address is confirmed is refused.
 */
describeInChromium('sign-up in Chromium', () => {
  let t: TestApp;
  let tessera: string;
  let browser: Browser;
  let smtp: TestSmtp;
  let worker: OutboxWorker;

  beforeAll(async () => {
    t = await createTestApp('sqlite', {
      ...LOOSE_SIGN_IN_LIMITS,
      SERVICE_REGISTRATION: 'open',
      SERVICE_REGISTRATION_EMAIL: 'verified',
    });
    // localhost, not 127.0.0.1: WebAuthn's relying party id must be a domain name.
    tessera = await listenForBrowser(t, 'localhost');
    browser = await sharedChromium();
    smtp = await startTestSmtp();
    worker = courierFor(t, smtp);
  });
  afterAll(async () => {
    await worker?.stop();
    await smtp?.stop();
    await releaseChromium(browser);
    await t?.close();
  });

  async function device(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext();
    context.setDefaultTimeout(5_000);
    return { context, page: await context.newPage() };
  }

  /** The code in the newest mail to `address`, once the outbox has sent it. */
  async function codeMailedTo(address: string): Promise<string> {
    await worker.drain();
    const mail = smtp.received.filter((m) => m.to && JSON.stringify(m.to).includes(address)).at(-1);
    expect(mail, `no mail to ${address}`).toBeDefined();
    return /\b(\d{6})\b/.exec(mail!.text ?? '')![1]!;
  }

  /**
   * What the browser's session cookie names, asked with the cookie itself (the hosted
   * pages' CSP lets no script of theirs call out, so not from inside the page).
   */
  async function whoami(page: Page): Promise<{ status: number; body: unknown }> {
    const cookie = (await page.context().cookies()).find((c) => c.name === 'service_session');
    if (!cookie) return { status: 401, body: null };
    const res = await t.inject({
      method: 'GET',
      url: '/v1/whoami',
      cookies: { service_session: cookie.value },
    });
    return { status: res.statusCode, body: res.json() };
  }

  async function signInWithPassword(page: Page, username: string): Promise<void> {
    await page.goto(`${tessera}/v1/login`);
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(STRONG);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  it('signs up with a password and an address, verifies it with the mailed code, signs in', async () => {
    const { page } = await device();
    const username = uniqueUser('web');
    const address = `${username}@example.com`;

    // From the login page, as a new user finds it.
    await page.goto(`${tessera}/v1/login`);
    await page.getByRole('link', { name: 'Create an account' }).click();
    expect(await page.title()).toBe('Create an account · Tessera');
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Display name (optional)').fill('Web Person');
    await page.getByLabel('Email address').fill(address);
    await page.getByLabel('Password').fill(STRONG);
    await page.getByRole('button', { name: 'Create account', exact: true }).click();

    // Not signed in yet: the address comes first.
    expect(await page.title()).toBe('Confirm your email address · Tessera');
    expect((await whoami(page)).status).toBe(401);

    // Signing in before the address is confirmed is refused, with a page that says why.
    const { page: other } = await device();
    await signInWithPassword(other, username);
    expect(await other.title()).toBe('Confirm your email address · Tessera');
    expect(await other.getByRole('alert').textContent()).toContain('not confirmed yet');
    expect((await whoami(other)).status).toBe(401);

    await page.getByLabel('Code from the mail').fill(await codeMailedTo(address));
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    expect(await page.title()).toBe('Email address confirmed · Tessera');

    await signInWithPassword(page, username);
    expect(await page.title()).toBe('Signed in · Tessera');
    expect(await whoami(page)).toMatchObject({
      status: 200,
      body: {
        authenticated_via: 'password',
        identity: { username, display_name: 'Web Person', email: address, email_verified: true },
      },
    });
  });

  it('signs up with a passkey instead of a password, then signs in with it', async () => {
    const { context, page } = await device();
    const cdp = await context.newCDPSession(page);
    await cdp.send('WebAuthn.enable');
    const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
      options: {
        protocol: 'ctap2',
        transport: 'internal',
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });
    const username = uniqueUser('key');
    const address = `${username}@example.com`;

    await page.goto(`${tessera}/v1/registration`);
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Email address').fill(address);
    await page.getByRole('button', { name: 'Create account with a passkey' }).click();
    await page.waitForURL(/\/v1\/verification\?id=/);
    const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]!.isResidentCredential).toBe(true);

    const identity = await t.deps.store.findIdentityByUsername(username);
    expect(identity).toMatchObject({ password_hash: null, email: address });
    expect(await t.deps.store.listPasskeys(identity!.id)).toHaveLength(1);

    await page.getByLabel('Code from the mail').fill(await codeMailedTo(address));
    await page.getByRole('button', { name: 'Confirm', exact: true }).click();
    expect(await page.title()).toBe('Email address confirmed · Tessera');

    // The login page's passkey autofill answers at once: signed in without typing anything.
    const landing = `${tessera}/v1/account`;
    await page.goto(`${tessera}/v1/login?return_to=${encodeURIComponent(landing)}`);
    await page.waitForURL(landing);
    expect(await whoami(page)).toMatchObject({
      status: 200,
      body: { authenticated_via: 'passkey', aal: 'aal2', identity: { username } },
    });
  });
});
