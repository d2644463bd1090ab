import { afterAll, beforeAll, expect, it } from 'vitest';
import { setIdentityEmail } from '../../src/domain/identities/identity-email.js';
import { importIdentities } from '../../src/domain/identity-transfer/import-identities.js';
import { hashTransfer } from '../../src/adapters/password-hashes/transfer.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createIdentity, testActor, uniqueName } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';

async function* linesOf(objects: object[]): AsyncGenerator<string> {
  for (const object of objects) yield JSON.stringify(object);
}

/**
 * `identity import` and addresses: canonicalised like everywhere else, and an address that
 * would belong to two identities (twice in the file, or held already) refuses the file
 * before anything is written.
 */
describeEachDatabase('identity import and email addresses', (kind) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(kind);
  });
  afterAll(() => t?.close());

  const importLines = (objects: object[]) =>
    importIdentities({ ...t.deps, transfer: hashTransfer }, testActor, linesOf(objects));

  it('imports addresses in canonical form, verified only when the line says so', async () => {
    const [a, b] = [uniqueName(), uniqueName()];
    const outcome = await importLines([
      { username: a, email: ` ${a.toUpperCase()}@Example.ORG `, email_verified: true },
      { username: b, email: `${b}@bücher.example` },
    ]);
    expect(outcome).toMatchObject({ summary: { imported: 2 } });
    expect(await t.deps.store.findIdentityByUsername(a)).toMatchObject({
      email: `${a}@example.org`,
      email_verified_at: t.clock.now(),
    });
    expect(await t.deps.store.findIdentityByUsername(b)).toMatchObject({
      email: `${b}@xn--bcher-kva.example`,
      email_verified_at: null,
    });
  });

  it('refuses the whole file for a bad address, a duplicate, or one already held', async () => {
    const holder = await createIdentity(t);
    const held = `${holder.username}@example.com`;
    await setIdentityEmail(t.deps, testActor, holder.id, { email: held });
    const names = Array.from({ length: 6 }, () => uniqueName());
    const outcome = await importLines([
      { username: names[0], email: 'x@example.net' },
      { username: names[1], email: 'X@EXAMPLE.NET' },
      { username: names[2], email: held.toUpperCase() },
      { username: names[3], email: 'two@@example.net' },
      { username: names[4], email_verified: true },
      { username: names[5], email: 'fine@example.net', email_verified: 'yes' },
    ]);
    expect(outcome).toEqual({
      refused: {
        count: 5,
        bad_lines: [
          { line: 2, message: 'email x@example.net is also on line 1' },
          { line: 3, message: `email ${held} belongs to another identity` },
          { line: 4, message: 'email must hold exactly one @ (2 given)' },
          { line: 5, message: 'email_verified needs an email' },
          { line: 6, message: 'email_verified must be a boolean' },
        ],
      },
    });
    for (const name of names) {
      expect(await t.deps.store.findIdentityByUsername(name)).toBeUndefined();
    }
  });
});
