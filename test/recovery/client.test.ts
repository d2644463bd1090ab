import { expect, it } from 'vitest';
import { createTesseraClient, TesseraError } from '@tessera/client';
import { NEW_PASSWORD } from '../account/helpers.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { codeOf, useRecoveryApp } from './helpers.js';

/** The typed client's recovery calls (packages/client), against a listening Tessera. */
describeEachDatabase('account recovery through the typed client', (kind) => {
  const h = useRecoveryApp(kind);

  it('starts a flow, gives the address, checks the code and sets the new password', async () => {
    const user = await h.user();
    const address = await h.t.app.listen({ port: 0, host: '127.0.0.1' });
    const client = createTesseraClient({ baseUrl: address });

    const flow = await client.getRecovery();
    expect(flow).toMatchObject({ state: 'created', address: null });
    const before = h.smtp.received.length;
    const sent = await client.submitRecoveryEmail(flow.id, flow.csrf_token, user.email);
    expect(sent).toMatchObject({ id: flow.id, state: 'sent', address: user.email });
    const code = codeOf((await h.mailsSince(before))[0]!);

    const wrong = await client
      .checkRecoveryCode(flow.id, {
        code: code === '000000' ? '111111' : '000000',
        csrf_token: flow.csrf_token,
      })
      .catch((error: unknown) => error);
    expect(wrong).toBeInstanceOf(TesseraError);
    expect(wrong).toMatchObject({ code: 'invalid_credentials', status: 401 });

    const accepted = await client.checkRecoveryCode(flow.id, { code, csrf_token: flow.csrf_token });
    expect(accepted.second_factor.methods).toEqual([]);
    const done = await client.completeRecovery(flow.id, {
      code,
      csrf_token: flow.csrf_token,
      password: NEW_PASSWORD,
    });
    expect(done.session).toMatchObject({ authenticated_via: 'recovery', aal: 'aal1' });
    expect((await client.getRecovery(flow.id)).state).toBe('completed');
  });
});
