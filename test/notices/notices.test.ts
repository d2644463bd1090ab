import type { ParsedMail } from 'mailparser';
import { afterEach, expect, it } from 'vitest';
import { buildCourier } from '../../src/courier.js';
import { setIdentityEmail } from '../../src/domain/identities/identity-email.js';
import { importIdentities } from '../../src/domain/identity-transfer/import-identities.js';
import { OutboxCounters, type OutboxWorker } from '../../src/domain/outbox/outbox-worker.js';
import { setPassword } from '../../src/domain/passwords/set-password.js';
import { hashTransfer } from '../../src/adapters/password-hashes/transfer.js';
import { LOOSE_SIGN_IN_LIMITS, PASSWORD, operator, startFlow, submit } from '../flows/helpers.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { FIXTURE_FORMATS } from '../helpers/hash-fixtures.js';
import { startTestSmtp, type TestSmtp } from '../helpers/smtp.js';
import { SoftAuthenticator } from '../helpers/soft-authenticator.js';
import { ORIGIN, type PasskeyTestApp, createPasskeyApp } from '../passkeys/helpers.js';
import { accountPost, enrolTotp, signInWithCode } from '../second-factor/helpers.js';

const FROM = 'Tessera <no-reply@example.com>';
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const NEW_PASSWORD = 'violet kettle drums sideways 42';
const MARKUP = '<img src=x onerror=alert(1)> & "Ali"';
const FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:132.0) Gecko/20100101 Firefox/132.0';
const ALICE = 'alice@example.com';

describeEachDatabase('security notices', (kind) => {
  let t: PasskeyTestApp | undefined;
  let smtp: TestSmtp | undefined;
  let worker: OutboxWorker | undefined;

  afterEach(async () => {
    await worker?.stop();
    await smtp?.stop();
    await t?.close();
    [t, smtp, worker] = [undefined, undefined, undefined];
  });

  /** A Tessera whose alice has a verified address, and a real SMTP server its worker sends to. */
  async function start(
    env: Record<string, string> = {},
    email: { email: string | null; verified?: boolean } = { email: ALICE, verified: true },
  ): Promise<PasskeyTestApp> {
    smtp = await startTestSmtp();
    t = await createPasskeyApp(kind, { ...LOOSE_SIGN_IN_LIMITS, ...env });
    await setIdentityEmail(t.deps, operator, t.alice.id, email);
    worker = buildCourier(
      { smtpUrl: smtp.url, from: FROM, templatesDir: null },
      { store: t.deps.store, clock: t.clock, counters: new OutboxCounters(), log: quiet },
    );
    return t;
  }

  /** Everything the worker sends once every queued mail had its turn. */
  async function delivered(): Promise<ParsedMail[]> {
    await worker!.drain();
    return smtp!.received;
  }

  /** Alice changes her password on the account page, from Firefox, in German. */
  async function changeOwnPassword(app: PasskeyTestApp, userAgent = FIREFOX): Promise<void> {
    const token = await app.passwordSignIn();
    const res = await app.inject({
      method: 'POST',
      url: '/v1/account/password',
      remoteAddress: '203.0.113.7',
      headers: {
        origin: ORIGIN,
        'user-agent': userAgent,
        'accept-language': 'de-DE,de;q=0.9,en;q=0.5',
        'x-csrf-token': await app.csrfFor(token),
      },
      cookies: { service_session: token },
      payload: { current_password: PASSWORD, new_password: NEW_PASSWORD },
    });
    expect(res.statusCode, res.body).toBe(204);
  }

  /** Alice with TOTP on, and an aal2 session that may turn it off. */
  async function aliceWithTotp(app: PasskeyTestApp): Promise<string> {
    const { secret } = await enrolTotp(app, await app.passwordSignIn());
    return signInWithCode(app, 'alice', secret);
  }

  it('a password change on the account page: one notice, in the browser language, with when and where, no secret, markup escaped', async () => {
    const app = await start();
    const identityWrite = await app.token('identity_write');
    const renamed = await app.call('PATCH', `/v1/identities/${app.alice.id}`, identityWrite, {
      display_name: MARKUP,
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    await changeOwnPassword(app);

    const mails = await delivered();
    expect(mails).toHaveLength(1);
    const mail = mails[0]!;
    expect(mail.to).toMatchObject({ text: ALICE });
    expect(mail.subject).toBe('Ihr Passwort wurde geändert');
    expect(mail.text).toContain(`Hallo ${MARKUP},`);
    expect(mail.text).toContain('Kontos alice wurde geändert');
    expect(mail.text).toContain('Gerät: Firefox 132, Windows 10');
    expect(mail.text).toContain('Adresse: 203.0.113.7');
    expect(mail.text).toMatch(/Wann: \d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    const html = String(mail.html);
    expect(html).toContain('Hallo &lt;img src=x onerror=alert(1)&gt; &amp; &quot;Ali&quot;,');
    expect(html).not.toContain('<img');
    for (const part of [mail.text!, html, mail.subject!]) {
      expect(part).not.toContain(NEW_PASSWORD);
      expect(part).not.toContain(PASSWORD);
    }
  });

  it('names the device only as far as the User-Agent parser recognises it, never the raw header', async () => {
    const app = await start();
    await changeOwnPassword(app, 'Call 555-0100 now: your account is safe');
    const mails = await delivered();
    expect(mails).toHaveLength(1);
    expect(mails[0]!.text).toContain('Gerät: —');
    expect(mails[0]!.text).not.toContain('555-0100');
  });

  it('a password set by a backend (PUT /v1/identities/{id}/password): one notice, in English, no browser named', async () => {
    const app = await start();
    const res = await app.call(
      'PUT',
      `/v1/identities/${app.alice.id}/password`,
      await app.token('direct_auth'),
      { password: NEW_PASSWORD },
    );
    expect(res.statusCode, res.body).toBe(204);
    const mails = await delivered();
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toBe('Your password was changed');
    expect(mails[0]!.text).toContain('Device: —\nAddress: —');
    expect(mails[0]!.text).not.toContain(NEW_PASSWORD);
  });

  it('second factor turned off on the account page: one notice; cancelling a setup that never finished sends none', async () => {
    const app = await start();
    const pending = await app.passwordSignIn();
    expect((await accountPost(app, pending, '/totp')).statusCode).toBe(200);
    expect((await accountPost(app, pending, '/disable')).statusCode).toBe(200);
    expect(await delivered()).toHaveLength(0);

    const session = await aliceWithTotp(app);
    const off = await accountPost(app, session, '/disable', {}, { 'user-agent': FIREFOX });
    expect(off.statusCode, off.body).toBe(200);
    const mails = await delivered();
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toBe('Two-step sign-in was turned off');
    expect(mails[0]!.text).toContain('Device: Firefox 132, Windows 10');
    expect(mails[0]!.text).toContain('If this was not you');
  });

  it("an operator's reset of the second factor (DELETE /v1/identities/{id}/second-factor) notifies the user", async () => {
    const app = await start();
    await aliceWithTotp(app);
    const res = await app.call(
      'DELETE',
      `/v1/identities/${app.alice.id}/second-factor`,
      await app.token('direct_auth'),
    );
    expect(res.statusCode, res.body).toBe(204);
    const mails = await delivered();
    expect(mails.map((mail) => mail.subject)).toEqual(['Two-step sign-in was turned off']);
    // A second reset finds nothing on: no second mail.
    await app.call(
      'DELETE',
      `/v1/identities/${app.alice.id}/second-factor`,
      await app.token('direct_auth'),
    );
    expect(await delivered()).toHaveLength(1);
  });

  it('a passkey added on the account page: one notice naming it, none of its key material', async () => {
    const app = await start();
    const token = await app.passwordSignIn();
    const added = await app.register(token, new SoftAuthenticator());
    expect(added.statusCode, added.body).toBe(201);
    const mails = await delivered();
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toBe('A passkey was added to your account');
    expect(mails[0]!.text).toContain('A passkey was added to your account alice');
    const stored = (await app.deps.store.listPasskeys(app.alice.id))[0]!;
    expect(mails[0]!.text).not.toContain(stored.credential_id);
  });

  it('SERVICE_MAIL_NOTICES=none sends none; a list sends only the kinds it names', async () => {
    const none = await start({ SERVICE_MAIL_NOTICES: 'none' });
    expect(
      (await none.register(await none.passwordSignIn(), new SoftAuthenticator())).statusCode,
    ).toBe(201);
    await changeOwnPassword(none);
    expect(await delivered()).toHaveLength(0);
    await worker!.stop();
    await smtp!.stop();
    await none.close();

    const some = await start({ SERVICE_MAIL_NOTICES: 'passkey_added, email_changed' });
    expect(
      (await some.register(await some.passwordSignIn(), new SoftAuthenticator())).statusCode,
    ).toBe(201);
    await changeOwnPassword(some);
    expect((await delivered()).map((mail) => mail.subject)).toEqual([
      'A passkey was added to your account',
    ]);
  });

  it('no mail to an unverified address, nor to an identity without one', async () => {
    const unverified = await start({}, { email: ALICE, verified: false });
    await changeOwnPassword(unverified);
    expect(await delivered()).toHaveLength(0);
    await setIdentityEmail(unverified.deps, operator, unverified.alice.id, { email: null });
    await setPassword(unverified.deps, operator, unverified.alice.id, PASSWORD);
    expect(await delivered()).toHaveLength(0);
  });

  it('a change that rolls back after queueing its notice sends nothing', async () => {
    const app = await start();
    const before = (await app.deps.store.findIdentityById(app.alice.id))!.password_hash;
    // The change's own transaction fails at its very end, after everything in it ran.
    const store = app.deps.store;
    const transaction = store.transaction.bind(store);
    const failure = new Error('the change fails before it commits');
    store.transaction = (work) =>
      transaction(async (tx) => {
        await work(tx);
        throw failure;
      });
    await expect(setPassword(app.deps, operator, app.alice.id, NEW_PASSWORD)).rejects.toBe(failure);
    store.transaction = transaction;
    expect((await store.findIdentityById(app.alice.id))!.password_hash).toBe(before);
    expect(await delivered()).toHaveLength(0);
    // The same change, committed, sends its one notice: the failure above was what stopped it.
    await setPassword(app.deps, operator, app.alice.id, NEW_PASSWORD);
    expect(await delivered()).toHaveLength(1);
  });

  it('a rehash at sign-in is no change: no notice', async () => {
    const app = await start();
    async function* line() {
      yield JSON.stringify({
        username: 'imported',
        password_hash: await FIXTURE_FORMATS.django_scrypt!(PASSWORD),
        email: 'imported@example.com',
        email_verified: true,
      });
    }
    await importIdentities({ ...app.deps, transfer: hashTransfer }, operator, line());
    const imported = (await app.deps.store.findIdentityByUsername('imported'))!;
    expect(imported).toMatchObject({ email: 'imported@example.com' });
    expect(imported.email_verified_at).not.toBeNull();
    const flow = await startFlow(app);
    const res = await submit(app, flow.id, {
      username: 'imported',
      password: PASSWORD,
      csrf_token: flow.csrf_token,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await app.deps.store.findIdentityByUsername('imported'))!.password_hash).toMatch(
      /^\$argon2id\$/,
    );
    expect(await delivered()).toHaveLength(0);
  });
});
