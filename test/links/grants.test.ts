import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectError } from '../helpers/core.js';
import { type CoreRequest, send } from '../helpers/core-endpoints.js';
import { describeEachDatabase } from '../helpers/databases.js';
import {
  createGrantTokens,
  describeGrantMatrix,
  type GrantTokens,
} from '../helpers/grant-tokens.js';
import { countRows } from './helpers.js';
import { LINK_ENDPOINTS } from './endpoints.js';

/** SPEC.md 5.1 and 5.2 for the link endpoints: each grant against each endpoint. */
describeEachDatabase('link endpoint grants', (kind) => {
  let t: TestApp;
  let tokens: GrantTokens;

  beforeAll(async () => {
    t = await createTestApp(kind);
    tokens = await createGrantTokens(t);
  });
  afterAll(() => t?.close());

  /** Identities, links and sessions: a refused call must not change any of them. */
  const snapshot = () =>
    Promise.all(
      (['identities', 'links', 'sessions'] as const).map((table) => countRows(t.db, table)),
    );

  describeGrantMatrix(LINK_ENDPOINTS, () => ({ t, tokens }), snapshot);

  describe('the rules of SPEC.md 5.2', () => {
    /** The refusal names the grant the route needs (SPEC 5.2). */
    const LACKS_GRANT = /^this service token lacks the [a-z_]+ grant$/;

    const requests = () => Promise.all(LINK_ENDPOINTS.map((endpoint) => endpoint.request(t)));

    it('direct_auth unlocks no link operation, not even with identity_write added', async () => {
      const token = await t.token('direct_auth', 'identity_write');
      for (const request of await requests()) {
        expectError(await send(t, request, token), 403, 'forbidden', LACKS_GRANT);
      }
    });

    it('sign-in needs no external_link, and external_link does not sign in', async () => {
      const [signIn] = await requests();
      expect((await send(t, signIn!, tokens.only('external_auth'))).statusCode).toBe(201);
      const [another] = await requests();
      const refused = await send(t, another!, tokens.only('external_link'));
      expectError(refused, 403, 'forbidden', /lacks the external_auth grant/);
    });

    it('external_auth alone can neither attach, detach nor list', async () => {
      const [, attach, list, detach] = await requests();
      for (const request of [attach, list, detach] as CoreRequest[]) {
        const refused = await send(t, request, tokens.only('external_auth'));
        expectError(refused, 403, 'forbidden', LACKS_GRANT);
      }
    });
  });

  it('refuses before reading the body: no token and a malformed body is still 401', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/v1/authenticate/link',
      headers: { 'content-type': 'application/json' },
      payload: '{not json',
    });
    expectError(res, 401, 'missing_service_token');
  });

  it('refuses a form-encoded body on a link endpoint: 422', async () => {
    const res = await t.inject({
      method: 'POST',
      url: '/v1/authenticate/link',
      headers: {
        authorization: `Bearer ${tokens.only('external_auth')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: 'provider=p&subject=s',
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toBe('validation_error');
  });
});
