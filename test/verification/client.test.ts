import { expect, it } from 'vitest';
import { createTesseraClient, TesseraError } from '@tessera/client';
import { describeEachDatabase } from '../helpers/databases.js';
import { codeOf, useVerificationApp, wrongCode } from './helpers.js';

/** The typed client's verification calls (packages/client), against a listening Tessera. */
describeEachDatabase('email verification through the typed client', (kind) => {
  const v = useVerificationApp(kind);

  it('reads the flow, refuses a wrong code, and confirms with the right one', async () => {
    const started = await v.startChange();
    const address = await v.t.app.listen({ port: 0, host: '127.0.0.1' });
    const client = createTesseraClient({ baseUrl: address });

    const flow = await client.getVerification(started.id);
    expect(flow).toMatchObject({ id: started.id, state: 'pending', address: started.newAddress });

    const wrong = await client
      .submitVerification(started.id, {
        code: wrongCode(codeOf(started.mail)),
        csrf_token: flow.csrf_token,
      })
      .catch((error: unknown) => error);
    expect(wrong).toBeInstanceOf(TesseraError);
    expect(wrong).toMatchObject({ code: 'invalid_credentials', status: 401 });

    const done = await client.submitVerification(started.id, {
      code: codeOf(started.mail),
      csrf_token: flow.csrf_token,
    });
    expect(done.identity).toMatchObject({ email: started.newAddress, email_verified: true });
    expect((await client.getVerification(started.id)).state).toBe('used');
  });
});
