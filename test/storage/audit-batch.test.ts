import { afterAll, beforeAll, expect, it } from 'vitest';
import { AuditLog, MAX_BUFFERED_AUDIT_ROWS } from '../../src/domain/audit/audit-log.js';
import type { Store } from '../../src/domain/store.js';
import type { StoreHandle } from '../../src/storage/store.js';
import { FakeClock } from '../helpers/clock.js';
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

  it("a transaction's rows, one or many, land with its commit, once", async () => {
    const before = await store.listAuditRecords(10_000);
    const one = auditRow({ details: JSON.stringify({ kept: 'one' }) });
    const many = [auditRow(), auditRow({ target_identity: null, service_id: null })];
    await store.transaction(async (tx) => {
      await tx.insertAuditRecords([one]);
      // Written again, alone or in a batch: still one row.
      await tx.insertAuditRecords([{ ...one, action: 'changed' }]);
      await tx.insertAuditRecords([...many, one]);
    });
    await expect(
      store.transaction(async (tx) => {
        await tx.insertAuditRecords([auditRow()]);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    const added = (await store.listAuditRecords(10_000)).filter(
      (row) => !before.some((old) => old.id === row.id),
    );
    expect(added).toHaveLength(3);
    for (const row of [one, ...many]) expect(added.find((r) => r.id === row.id)).toEqual(row);
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

  it('buffered rows reach the store whole; a refused flush keeps them, up to the cap', async () => {
    let refuse = true;
    // The real store, refusing the buffered inserts while `refuse` holds (an outage).
    const refusing: Store = Object.assign(Object.create(store) as Store, {
      insertAuditRecords: (records: Parameters<Store['insertAuditRecords']>[0]) =>
        refuse ? Promise.reject(new Error('refused')) : store.insertAuditRecords(records),
    });
    const clock = new FakeClock(T0);
    const lost: number[] = [];
    const log = new AuditLog(refusing, clock, 60_000, (_error, count) => lost.push(count));
    const over = 150;
    for (let i = 0; i < MAX_BUFFERED_AUDIT_ROWS + over; i++) {
      clock.advance(1);
      log.enqueue(
        { service_name: 'svc', service_id: `service-${i % 3}` },
        {
          action: i % 2 ? 'session_verify' : 'identity_read',
          target_identity: i % 5 ? null : `identity-${i}`,
          outcome: i % 7 ? undefined : 'invalid_token',
          details: { i },
        },
      );
    }
    await log.flush();
    expect(lost.reduce((sum, count) => sum + count, 0)).toBe(over);

    refuse = false;
    await log.flush();
    const rows = (await store.listAuditRecords(100_000)).filter((row) =>
      row.service_id?.startsWith('service-'),
    );
    expect(rows).toHaveLength(MAX_BUFFERED_AUDIT_ROWS);
    expect(new Set(rows.map((row) => row.id)).size).toBe(MAX_BUFFERED_AUDIT_ROWS);
    for (const row of rows) {
      const { i } = JSON.parse(row.details) as { i: number };
      expect(row).toEqual({
        id: expect.any(String),
        at: T0 + i + 1,
        action: i % 2 ? 'session_verify' : 'identity_read',
        service_name: 'svc',
        service_id: `service-${i % 3}`,
        target_identity: i % 5 ? null : `identity-${i}`,
        outcome: i % 7 ? 'ok' : 'invalid_token',
        details: JSON.stringify({ i }),
      });
    }
  });
});
