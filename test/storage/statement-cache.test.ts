import BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { withStatementCache } from '../../src/storage/sqlite/statement-cache.js';

describe('SQLite statement cache (Kysely driver side)', () => {
  let raw: BetterSqlite3.Database;
  afterEach(() => raw?.close());

  function open() {
    raw = new BetterSqlite3(':memory:');
    raw.exec('CREATE TABLE t (n INTEGER)');
    raw.exec('INSERT INTO t VALUES (1), (2), (3)');
    return withStatementCache(raw, 2);
  }

  it('hands out the compiled statement again for the same text', () => {
    const db = open();
    const first = db.prepare('SELECT n FROM t WHERE n > ?');
    expect(db.prepare('SELECT n FROM t WHERE n > ?')).toBe(first);
    expect(first.all([1])).toEqual([{ n: 2 }, { n: 3 }]);
  });

  it('prepares a fresh statement while the kept one is being iterated', () => {
    const db = open();
    const sql = 'SELECT n FROM t ORDER BY n';
    const iterator = db.prepare(sql).iterate([]);
    expect(iterator.next().value).toEqual({ n: 1 });
    const other = db.prepare(sql);
    expect(other.all([])).toHaveLength(3);
    expect([...iterator]).toEqual([{ n: 2 }, { n: 3 }]);
  });

  it('keeps at most its capacity, evicting the least recently used', () => {
    const db = open();
    const a = db.prepare('SELECT 1');
    const b = db.prepare('SELECT 2');
    expect(db.prepare('SELECT 1')).toBe(a);
    db.prepare('SELECT 3');
    expect(db.prepare('SELECT 1')).toBe(a);
    expect(db.prepare('SELECT 2')).not.toBe(b);
  });

  it('sees rows written after the statement was kept and survives a schema change', () => {
    const db = open();
    const count = db.prepare('SELECT count(*) AS c FROM t');
    expect(count.all([])).toEqual([{ c: 3 }]);
    db.prepare('INSERT INTO t VALUES (?)').run([4]);
    raw.exec('ALTER TABLE t ADD COLUMN label TEXT');
    expect(db.prepare('SELECT count(*) AS c FROM t').all([])).toEqual([{ c: 4 }]);
  });
});
