import { afterAll, beforeAll, expect, it } from 'vitest';
import type { StoreHandle } from '../../src/storage/store.js';
import { createMigratedStore, describeEachDatabase } from '../helpers/databases.js';
import { auditRow, T0 } from '../helpers/records.js';

/**
 * The buffered audit flush runs as prepared statements outside Kysely (storage/sqlite and
 * storage/postgres audit-batch): every row of any batch size lands exactly once, and a
 * flush during another transaction neither joins nor waits on its outcome.
 */
describeEachDatabase('audit batch insert', (kind) => {
  let store: StoreHandle;
  beforeAll(async () => {
    store = await createMigratedStore(kind);
  });
  afterAll(() => store?.close());

  it('writes every row of batches around the statement chunk size, once', async () => {
    let at = T0;
    const batches = [1, 49, 50, 51, 123, 500].map((size) =>
      Array.from({ length: size }, (_, i) =>
        auditRow({ at: at++, details: JSON.stringify({ size, i }), target_identity: null }),
      ),
    );
    for (const batch of batches) await store.insertAuditRecords(batch);
    // A retried batch (and a duplicate inside one) changes nothing.
    await store.insertAuditRecords([...batches[2]!, batches[2]![0]!]);
    const all = batches.flat();
    const listed = await store.listAuditRecords(10_000);
    expect(listed).toHaveLength(all.length);
    expect(new Set(listed.map((row) => row.id))).toEqual(new Set(all.map((row) => row.id)));
    expect(listed.find((row) => row.id === all[77]!.id)).toEqual(all[77]);
  });

  it('a flush while another transaction rolls back keeps its rows', async () => {
    const before = (await store.listAuditRecords(10_000)).length;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const ready = new Promise<void>((resolve) => (started = resolve));
    const transaction = store.transaction(async (tx) => {
      await tx.insertAuditRecords([auditRow()]);
      started();
      await held;
      throw new Error('roll back');
    });
    await ready;
    const flushed = store.insertAuditRecords([auditRow(), auditRow()]);
    release();
    await expect(transaction).rejects.toThrow('roll back');
    await flushed;
    expect(await store.listAuditRecords(10_000)).toHaveLength(before + 2);
  });
});
