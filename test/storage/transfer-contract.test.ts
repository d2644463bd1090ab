import { afterAll, beforeAll, expect, it } from 'vitest';
import { UniqueViolation } from '../../src/storage/errors.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { createMigratedStore, describeEachDatabase } from '../helpers/databases.js';
import { identityRow, linkRow, T0 } from '../helpers/records.js';

/** The bulk methods of import and export, and the rehash swap, on both adapters. */
describeEachDatabase('store contract: import, export, rehash', (kind) => {
  let store: StoreHandle;
  beforeAll(async () => {
    store = await createMigratedStore(kind);
  });
  afterAll(() => store?.close());

  it('inserts identities and links many at a time, past one statement of 500', async () => {
    const rows = Array.from({ length: 1_203 }, (_, n) =>
      identityRow({
        username: `bulk-${n}`,
        created_at: T0 + n,
        // Every other one with an address: 602 of them, past one statement of 500.
        ...(n % 2 === 0 ? { email: `bulk-${n}@example.com`, email_verified_at: T0 } : {}),
      }),
    );
    await store.insertIdentities(rows);
    const links = rows.map((row, n) => linkRow(row.id, { provider: 'bulk', subject: `s-${n}` }));
    await store.insertLinks(links);
    expect(await store.findIdentityById(rows[1_202]!.id)).toEqual(rows[1_202]);
    expect(await store.listLinks(rows[700]!.id)).toEqual([links[700]]);

    const asked = [...rows.map((row) => row.username), 'bulk-none'];
    expect((await store.existingUsernames(asked)).sort()).toEqual(
      rows.map((row) => row.username).sort(),
    );
    const emails = rows.map((_, n) => `bulk-${n}@example.com`);
    expect((await store.existingEmails(emails)).sort()).toEqual(
      rows.flatMap((row) => (row.email === null ? [] : [row.email])).sort(),
    );
    expect(await store.existingEmails(['nobody@example.com'])).toEqual([]);
    const ids = [rows[0]!.id, identityRow().id, rows[1_100]!.id];
    expect((await store.existingIdentityIds(ids)).sort()).toEqual(
      [rows[0]!.id, rows[1_100]!.id].sort(),
    );
    const keys = [
      ...links.map(({ provider, subject }) => ({ provider, subject })),
      { provider: 'bulk', subject: 'unknown' },
      { provider: 'other', subject: 's-1' },
    ];
    const found = await store.existingLinks(keys);
    expect(found).toHaveLength(links.length);
    expect(found).toContainEqual({ provider: 'bulk', subject: 's-1' });
  });

  it('a taken username in a bulk insert is UniqueViolation, and none of the rows stay', async () => {
    const first = identityRow();
    await store.insertIdentity(first);
    const batch = [identityRow(), identityRow({ username: first.username })];
    const error = await store
      .transaction((tx) => tx.insertIdentities(batch))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UniqueViolation);
    expect(await store.findIdentityById(batch[0]!.id)).toBeUndefined();
  });

  it('pages identities by id, with their hashes, filtered by state; links grouped per identity', async () => {
    const fresh = await createMigratedStore(kind);
    try {
      const rows = [
        identityRow({ state: 'active' }),
        identityRow({ state: 'disabled', password_hash: null }),
        identityRow({ state: 'active' }),
      ].sort((a, b) => (a.id < b.id ? -1 : 1));
      await fresh.insertIdentities(rows);
      const first = await fresh.exportPage({ afterId: null, limit: 2 });
      expect(first).toEqual(rows.slice(0, 2));
      expect(await fresh.exportPage({ afterId: first[1]!.id, limit: 2 })).toEqual(rows.slice(2));
      expect(await fresh.exportPage({ afterId: null, state: 'disabled', limit: 10 })).toEqual(
        rows.filter((row) => row.state === 'disabled'),
      );
      const a = linkRow(rows[0]!.id, { linked_at: T0 + 2 });
      const b = linkRow(rows[0]!.id, { linked_at: T0 + 1 });
      const c = linkRow(rows[2]!.id);
      await fresh.insertLinks([a, b, c]);
      expect(await fresh.linksOf([rows[0]!.id, rows[1]!.id])).toEqual([b, a]);
      expect(await fresh.linksOf([])).toEqual([]);
    } finally {
      await fresh.close();
    }
  });

  it('swaps a password hash only while it is still the expected one, keeping updated_at', async () => {
    const row = identityRow({ password_hash: 'imported:$2b$04$old' });
    await store.insertIdentity(row);
    expect(await store.replacePasswordHash(row.id, 'imported:$2b$04$other', '$argon2id$new')).toBe(
      false,
    );
    expect(await store.replacePasswordHash(row.id, 'imported:$2b$04$old', '$argon2id$new')).toBe(
      true,
    );
    expect(await store.findIdentityById(row.id)).toEqual({
      ...row,
      password_hash: '$argon2id$new',
    });
    expect(await store.replacePasswordHash(row.id, 'imported:$2b$04$old', '$argon2id$later')).toBe(
      false,
    );
  });
});
