import { expect, it } from 'vitest';
import { NEW_PASSWORD, addUser } from '../account/helpers.js';
import { createTestApp } from '../helpers/app.js';
import { describeOnPostgres } from '../helpers/databases.js';
import { startTestSmtp } from '../helpers/smtp.js';
import { LOOSE_SIGN_IN_LIMITS } from '../flows/helpers.js';
import { PUBLIC_URL, courierFor } from '../verification/helpers.js';
import { codeOf } from './helpers.js';

/** Two instances on one PostgreSQL schema: racing right codes, split between them, set one password. */
describeOnPostgres('account recovery on two instances', () => {
  it('lets exactly one of concurrent right submissions of one code through, across instances', async () => {
    const env = { ...LOOSE_SIGN_IN_LIMITS, SERVICE_PUBLIC_URL: PUBLIC_URL };
    const first = await createTestApp('postgres', env);
    const second = await createTestApp('postgres', env, first.db);
    const mailer = await startTestSmtp();
    const courier = courierFor(second, mailer);
    try {
      const user = await addUser(first);
      const email = `${user.username}@two.example.com`;
      const writer = await first.token('identity_write');
      await first.call('PUT', `/v1/identities/${user.id}/email`, writer, { email, verified: true });
      await courier.drain();
      const before = mailer.received.length;
      const flow = (await first.inject({ method: 'GET', url: '/v1/recovery' })).json();
      const sent = await second.inject({
        method: 'POST',
        url: `/v1/recovery/${flow.id}/email`,
        payload: { csrf_token: flow.csrf_token, email },
      });
      expect(sent.statusCode, sent.body).toBe(200);
      await courier.drain();
      const code = codeOf(mailer.received[before]!);
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          (i % 2 === 0 ? first : second).inject({
            method: 'POST',
            url: `/v1/recovery/${flow.id}`,
            payload: { csrf_token: flow.csrf_token, code, password: `${NEW_PASSWORD} ${i}` },
          }),
        ),
      );
      expect(results.filter((res) => res.statusCode === 200)).toHaveLength(1);
      expect(results.filter((res) => res.statusCode === 401)).toHaveLength(7);
      expect(await first.deps.store.listLiveSessions(user.id, first.clock.now())).toHaveLength(1);
    } finally {
      await courier.stop();
      await mailer.stop();
      await second.close();
      await first.close();
    }
  });
});
