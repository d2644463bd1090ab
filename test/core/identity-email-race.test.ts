import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createIdentity, namedToken, PASSWORD, uniqueName } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';

const RACERS = 8;

/** `Ab@Example.com`, `aB@EXAMPLE.COM`, …: one address spelt differently by each racer. */
function spellings(email: string): string[] {
  return Array.from({ length: RACERS }, (_, racer) =>
    [...email]
      .map((char, index) => ((index + racer) % 2 === 0 ? char.toUpperCase() : char))
      .join(''),
  );
}

const outcomes = (answers: { statusCode: number; json(): unknown }[]) =>
  answers.map((res) => res.statusCode).sort();

/**
 * An address belongs to one identity at most, decided by the database's unique index:
 * concurrent registrations and changes with one address, in different case, from two app
 * instances on one database (their own pools), give exactly one success; every other is
 * 409 email_taken.
 */
describeEachDatabase('identity email uniqueness under races', (kind) => {
  let first: TestApp;
  let second: TestApp;
  const direct: string[] = [];
  const write: string[] = [];
  beforeAll(async () => {
    first = await createTestApp(kind);
    second = await createTestApp(kind, {}, first.db);
    for (const app of [first, second]) {
      direct.push(await namedToken(app, 'direct_auth'));
      write.push(await namedToken(app, 'identity_write'));
    }
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  const app = (racer: number) => (racer % 2 === 0 ? first : second);

  it('concurrent registrations: one 201, the rest 409 email_taken', async () => {
    const email = `${uniqueName()}@example.com`;
    const answers = await Promise.all(
      spellings(email).map((spelling, racer) =>
        app(racer).call(
          'POST',
          racer % 4 < 2 ? '/v1/register' : '/v1/register-and-authenticate',
          direct[racer % 2]!,
          { username: uniqueName(), password: PASSWORD, email: spelling },
        ),
      ),
    );
    expect(outcomes(answers)).toEqual([201, ...Array(RACERS - 1).fill(409)]);
    for (const res of answers.filter((answer) => answer.statusCode === 409)) {
      expect(res.json()).toEqual({ error: 'email_taken' });
    }
    const winner = answers.find((res) => res.statusCode === 201)!.json() as {
      id?: string;
      session?: { identity: { id: string } };
    };
    const stored = await first.deps.store.findIdentityByEmail(email);
    expect(stored?.id).toBe(winner.id ?? winner.session!.identity.id);
  });

  it('concurrent PUTs of one address on different identities: one 200, the rest 409', async () => {
    const email = `${uniqueName()}@example.com`;
    const identities = await Promise.all(
      Array.from({ length: RACERS }, () => createIdentity(first)),
    );
    const answers = await Promise.all(
      spellings(email).map((spelling, racer) =>
        app(racer).call('PUT', `/v1/identities/${identities[racer]!.id}/email`, write[racer % 2]!, {
          email: spelling,
          verified: true,
        }),
      ),
    );
    expect(outcomes(answers)).toEqual([200, ...Array(RACERS - 1).fill(409)]);
    for (const res of answers.filter((answer) => answer.statusCode === 409)) {
      expect(res.json()).toEqual({ error: 'email_taken' });
    }
    const winner = identities[answers.findIndex((res) => res.statusCode === 200)]!;
    expect((await first.deps.store.findIdentityByEmail(email))?.id).toBe(winner.id);
    for (const identity of identities.filter((one) => one.id !== winner.id)) {
      expect((await first.deps.store.findIdentityById(identity.id))?.email).toBeNull();
    }
  });

  it('registrations racing PUTs for one address: exactly one holds it', async () => {
    const email = `${uniqueName()}@example.com`;
    const identities = await Promise.all(
      Array.from({ length: RACERS / 2 }, () => createIdentity(first)),
    );
    const answers = await Promise.all(
      spellings(email).map((spelling, racer) =>
        racer % 2 === 0
          ? app(racer).call('POST', '/v1/register', direct[0]!, {
              username: uniqueName(),
              password: PASSWORD,
              email: spelling,
            })
          : app(racer).call(
              'PUT',
              `/v1/identities/${identities[(racer - 1) / 2]!.id}/email`,
              write[1]!,
              { email: spelling },
            ),
      ),
    );
    const won = answers.filter((res) => res.statusCode < 300);
    expect(won).toHaveLength(1);
    expect(answers.filter((res) => res.statusCode === 409)).toHaveLength(RACERS - 1);
    expect((await first.deps.store.findIdentityByEmail(email))?.id).toBe(won[0]!.json().id);
  });
});
