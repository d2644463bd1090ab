import { afterAll, beforeAll, expect, it } from 'vitest';
import { UniqueViolation } from '../../src/storage/errors.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { createMigratedStore, describeEachDatabase } from '../helpers/databases.js';
import { identityRow, linkRow, T0 } from '../helpers/records.js';

/** The LinkStore contract, identical on both adapters. */
describeEachDatabase('link store', (kind) => {
  let store: StoreHandle;
  beforeAll(async () => {
    store = await createMigratedStore(kind);
  });
  afterAll(() => store?.close());

  async function identities(n: number): Promise<string[]> {
    const rows = Array.from({ length: n }, () => identityRow());
    for (const row of rows) await store.insertIdentity(row);
    return rows.map((row) => row.id);
  }

  it('insertLink refuses a second owner of a pair with UniqueViolation', async () => {
    const [a, b] = await identities(2);
    const link = linkRow(a!);
    await store.insertLink(link);
    await expect(store.insertLink({ ...link, identity_id: b! })).rejects.toBeInstanceOf(
      UniqueViolation,
    );
    expect(await store.findLink(link.provider, link.subject)).toEqual(link);
  });

  it('claimLink inserts once and leaves an owned pair alone', async () => {
    const [a, b] = await identities(2);
    const link = linkRow(a!);
    expect(await store.claimLink(link)).toBe(true);
    expect(await store.claimLink({ ...link, identity_id: b!, verified_at: T0 + 5 })).toBe(false);
    expect(await store.findLink(link.provider, link.subject)).toEqual(link);
  });

  it('claimLink keeps its transaction usable after a conflict (PostgreSQL aborts on errors)', async () => {
    const [a, b] = await identities(2);
    const link = linkRow(a!);
    await store.insertLink(link);
    const owner = await store.transaction(async (tx) => {
      expect(await tx.claimLink({ ...link, identity_id: b! })).toBe(false);
      return (await tx.findLink(link.provider, link.subject))?.identity_id;
    });
    expect(owner).toBe(a);
  });

  it('markLinkVerified sets verified_at once and returns the link; undefined when absent', async () => {
    const [a] = await identities(1);
    const link = linkRow(a!);
    await store.insertLink(link);
    expect(await store.markLinkVerified(link.provider, link.subject, T0 + 10)).toEqual({
      ...link,
      verified_at: T0 + 10,
    });
    expect(await store.markLinkVerified(link.provider, link.subject, T0 + 20)).toEqual({
      ...link,
      verified_at: T0 + 10,
    });
    expect(await store.markLinkVerified('none', 'none', T0)).toBeUndefined();
  });

  it('listLinks orders by linked_at, then provider and subject, and only for the identity', async () => {
    const [a, b] = await identities(2);
    const rows = [
      linkRow(a!, { provider: 'b', subject: '1', linked_at: T0 + 2 }),
      linkRow(a!, { provider: 'z', subject: '1', linked_at: T0 }),
      linkRow(a!, { provider: 'a', subject: '2', linked_at: T0 + 2 }),
      linkRow(a!, { provider: 'a', subject: '1', linked_at: T0 + 2 }),
      linkRow(b!, { provider: 'a', subject: '0', linked_at: T0 - 1 }),
    ];
    for (const row of rows) await store.insertLink(row);
    const listed = await store.listLinks(a!);
    expect(listed.map((row) => `${row.provider}/${row.subject}`)).toEqual([
      'z/1',
      'a/1',
      'a/2',
      'b/1',
    ]);
  });

  it('matches provider and subject byte for byte (case, accents, multi-byte)', async () => {
    const [a] = await identities(1);
    const link = linkRow(a!, { provider: 'Prov€', subject: 'Café' });
    await store.insertLink(link);
    expect(await store.findLink('prov€', 'Café')).toBeUndefined();
    expect(await store.findLink('Prov€', 'Cafe\u0301')).toBeUndefined();
    expect(await store.findLink('Prov€', 'Café')).toEqual(link);
  });

  it('deleteLink removes only when the pair belongs to the identity', async () => {
    const [a, b] = await identities(2);
    const link = linkRow(a!);
    await store.insertLink(link);
    expect(await store.deleteLink(b!, link.provider, link.subject)).toBe(false);
    expect(await store.findLink(link.provider, link.subject)).toEqual(link);
    expect(await store.deleteLink(a!, link.provider, link.subject)).toBe(true);
    expect(await store.findLink(link.provider, link.subject)).toBeUndefined();
    expect(await store.deleteLink(a!, link.provider, link.subject)).toBe(false);
  });
});
