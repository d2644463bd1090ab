import { createSecretBox } from '../../src/lib/secret-box.js';
import { afterEach, expect, it } from 'vitest';
import {
  IMPORT_BATCH,
  type ImportOutcome,
  importIdentities,
} from '../../src/domain/identity-transfer/import-identities.js';
import type { Store } from '../../src/domain/store.js';
import { hashTransfer } from '../../src/adapters/password-hashes/transfer.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { testHasher } from '../helpers/app.js';
import { FakeClock } from '../helpers/clock.js';
import { testActor } from '../helpers/core.js';
import { createMigratedStore, describeEachDatabase } from '../helpers/databases.js';
import { createPasswordPolicy } from '../../src/password-checks/password-checks.js';

async function* linesOf(objects: object[]): AsyncGenerator<string> {
  for (const object of objects) yield JSON.stringify(object);
}

const user = (n: number) => ({
  username: `user-${n}`,
  password_hash: '$2b$04$abcdefghijklmnopqrstuu5ZTfCqjbiSCmfaVlmE8KjCTlJ4Hr6C6',
  links: [{ provider: 'legacy', subject: `s-${n}` }],
});

/** The store, with `change` applied to the store each transaction hands out. */
function withTransactions(store: StoreHandle, change: (tx: Store) => Store): Store {
  return {
    ...store,
    transaction: (work) => store.transaction((tx) => work(change(tx))),
  };
}

describeEachDatabase('identity import, batch by batch', (kind) => {
  let store: StoreHandle | undefined;
  afterEach(() => store?.close());

  const run = async (target: Store, objects: object[]): Promise<ImportOutcome> =>
    importIdentities(
      {
        store: target,
        clock: new FakeClock(),
        hasher: await testHasher(),
        transfer: hashTransfer,
        passwordPolicy: createPasswordPolicy(0),
        secretBox: createSecretBox('batches test key'),
      },
      testActor,
      linesOf(objects),
    );

  it('a failure in a later batch leaves the earlier batches whole and nothing of its own', async () => {
    store = await createMigratedStore(kind);
    const users = Array.from({ length: IMPORT_BATCH + 10 }, (_, n) => user(n));
    let batches = 0;
    // A transaction's store keeps its methods on its prototype: overridden on top, not spread.
    const failing = withTransactions(store, (tx) =>
      Object.assign(Object.create(tx) as Store, {
        insertIdentities: async (records: Parameters<Store['insertIdentities']>[0]) => {
          batches += 1;
          await tx.insertIdentities(records);
        },
        // The second batch's identities are in; its links fail: the whole batch must go.
        insertLinks: async (records: Parameters<Store['insertLinks']>[0]) => {
          if (batches === 2) throw new Error('links refused');
          await tx.insertLinks(records);
        },
      }),
    );
    await expect(run(failing, users)).rejects.toThrow('links refused');
    const listed = await store.listIdentities({ limit: 10_000 });
    expect(listed).toHaveLength(IMPORT_BATCH);
    expect(await store.findIdentityByUsername(`user-${IMPORT_BATCH}`)).toBeUndefined();
    const first = (await store.findIdentityByUsername('user-0'))!;
    expect(await store.listLinks(first.id)).toHaveLength(1);
    const audited = await store.listAuditRecords(10_000, { actions: ['identity_import'] });
    expect(audited).toHaveLength(IMPORT_BATCH);

    // The re-run skips the first batch and writes the rest.
    const again = await run(store, users);
    expect(again).toEqual({
      summary: {
        imported: 10,
        skipped: IMPORT_BATCH,
        failed: [],
        passwords: { bcrypt: 10 },
        second_factors: {},
      },
    });
  });

  it('a link claimed between the check and the write fails that line alone', async () => {
    store = await createMigratedStore(kind);
    await run(store, [user(1)]);
    const owner = (await store.findIdentityByUsername('user-1'))!;
    // The first look (outside any transaction) misses the link, as if it were claimed
    // just after; the check inside the write's transaction sees it.
    const late: Store = { ...store, existingLinks: async () => [] };
    const outcome = await run(late, [
      user(2),
      { ...user(3), links: [{ provider: 'legacy', subject: 's-1' }] },
    ]);
    expect(outcome).toEqual({
      summary: {
        imported: 1,
        skipped: 0,
        failed: [{ line: 2, message: 'link "legacy"/"s-1" belongs to another identity' }],
        passwords: { bcrypt: 1 },
        second_factors: {},
      },
    });
    expect(await store.findIdentityByUsername('user-3')).toBeUndefined();
    expect((await store.findLink('legacy', 's-1'))?.identity_id).toBe(owner.id);
  });
});
