import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTesseraClient, TesseraError } from '@tessera/client';
import { type TestApp, createTestApp } from '../helpers/app.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { OPEN, STRONG, uniqueUser } from './helpers.js';

/** The typed client's sign-up calls (packages/client), against a listening Tessera. */
describeEachDatabase('sign-up through the typed client', (kind) => {
  let t: TestApp;
  let baseUrl: string;
  beforeAll(async () => {
    t = await createTestApp(kind, OPEN);
    baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => t?.close());

  it('starts a registration flow, refuses a taken name, signs up', async () => {
    const client = createTesseraClient({ baseUrl });
    const flow = await client.startRegistration();
    expect(flow).toMatchObject({ state: 'created', email: 'optional' });
    const username = uniqueUser('client');
    const done = await client.submitRegistrationPassword(flow.id, {
      username,
      password: STRONG,
      csrf_token: flow.csrf_token,
    });
    expect(done).toMatchObject({ identity: { username }, session: { identity: { username } } });

    const again = await client.startRegistration();
    const taken = await client
      .submitRegistrationPassword(again.id, {
        username,
        password: STRONG,
        csrf_token: again.csrf_token,
      })
      .catch((error: unknown) => error);
    expect(taken).toBeInstanceOf(TesseraError);
    expect(taken).toMatchObject({ code: 'username_taken', status: 409 });
  });
});
