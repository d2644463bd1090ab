import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildServices } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createServiceToken } from '../../src/domain/service-tokens/service-token-service.js';
import { createTestDatabase, describeOnPostgres, type TestDatabase } from '../helpers/databases.js';
import { type LoggingServe, startServe } from '../helpers/serve.js';
import { cliEnvFor } from '../helpers/transfer.js';
import { cliSandbox, type CliSandbox } from '../helpers/cli.js';

const PASSWORD = 'correct horse battery';
const RACERS = 8;

/**
 * Two `tessera serve` processes on one PostgreSQL schema, as two instances behind a load
 * balancer: registrations and address changes racing for one address, in different case,
 * spread over both, leave it with exactly one identity; every other request is 409
 * email_taken.
 */
describeOnPostgres('email uniqueness across two serve processes', () => {
  let box: CliSandbox;
  let db: TestDatabase;
  let a: LoggingServe;
  let b: LoggingServe;
  let token: string;

  beforeAll(async () => {
    box = cliSandbox();
    db = await createTestDatabase('postgres');
    const env = { ...cliEnvFor(box, db), SERVICE_HOST: '127.0.0.1' };
    // Started together: they also race to apply the migrations.
    [a, b] = await Promise.all([startServe(env), startServe(env)]);
    const services = await buildServices(loadConfig(env), {
      warn: () => undefined,
      error: () => undefined,
    });
    try {
      const created = await createServiceToken(
        services.deps,
        { service_name: 'email-race-test', service_id: null },
        { name: 'backend', grants: ['direct_auth', 'identity_write', 'identity_read'] },
      );
      token = created.token;
    } finally {
      await services.close();
    }
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await db?.drop();
    box?.remove();
  });

  const call = (instance: LoggingServe, method: string, path: string, body: unknown) =>
    fetch(`${instance.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const spelling = (email: string, racer: number) =>
    [...email].map((char, i) => ((i + racer) % 2 === 0 ? char.toUpperCase() : char)).join('');

  it('registrations and PUTs for one address on both processes: exactly one wins', async () => {
    const email = `race-${Date.now()}@example.com`;
    const others = await Promise.all(
      Array.from({ length: RACERS / 2 }, async (_, n) => {
        const res = await call(a, 'POST', '/v1/register', {
          username: `other-${n}-${Date.now()}`,
          password: PASSWORD,
        });
        return ((await res.json()) as { id: string }).id;
      }),
    );
    const answers = await Promise.all(
      Array.from({ length: RACERS }, (_, racer) => {
        const instance = racer % 2 === 0 ? a : b;
        return racer < RACERS / 2
          ? call(instance, 'POST', '/v1/register', {
              username: `racer-${racer}-${Date.now()}`,
              password: PASSWORD,
              email: spelling(email, racer),
            })
          : call(instance, 'PUT', `/v1/identities/${others[racer - RACERS / 2]}/email`, {
              email: spelling(email, racer),
            });
      }),
    );
    const bodies = await Promise.all(answers.map((res) => res.json() as Promise<{ id?: string }>));
    const won = answers.flatMap((res, i) => (res.status < 300 ? [bodies[i]!] : []));
    expect(won).toHaveLength(1);
    const lost = answers.flatMap((res, i) => (res.status >= 300 ? [[res.status, bodies[i]]] : []));
    expect(lost).toEqual(Array(RACERS - 1).fill([409, { error: 'email_taken' }]));
    const found = await fetch(`${b.url}/v1/identities?email=${encodeURIComponent(email)}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await found.json()) as { id: string }).id).toBe(won[0]!.id);
  });
});
