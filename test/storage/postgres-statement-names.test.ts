import { randomBytes } from 'node:crypto';
import { Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { leasedPostgresDialect } from '../../src/storage/postgres/dialect.js';
import { PostgresPool } from '../../src/storage/postgres/pool.js';
import { statementNames } from '../../src/storage/postgres/statement-names.js';
import { describeOnPostgres, postgresUrl } from '../helpers/databases.js';
import { asAdmin } from '../helpers/postgres-admin.js';

describe('statementNames', () => {
  it('names a text the same every time, and two texts apart', () => {
    const nameOf = statementNames();
    const one = nameOf('select "id" from "t" where "id" = $1', 1);
    expect(one).toMatch(/^tessera_[\w-]{32}$/);
    expect(statementNames()('select "id" from "t" where "id" = $1', 1)).toBe(one);
    expect(nameOf('select "a" from "t" where "id" = $1', 1)).not.toBe(one);
  });

  it('leaves unnamed what has no parameter, reads *, or is long', () => {
    const nameOf = statementNames();
    expect(nameOf('begin', 0)).toBeUndefined();
    expect(nameOf('select * from "t" where "id" = $1', 1)).toBeUndefined();
    expect(nameOf('select "t".* from "t" where "id" = $1', 1)).toBeUndefined();
    expect(nameOf(`select "id" from "t" where "id" in (${'$1, '.repeat(2000)}$1)`, 1)).toBe(
      undefined,
    );
  });

  it('names 512 texts at most, and keeps naming those', () => {
    const nameOf = statementNames();
    const text = (i: number) => `select "id" from "t" where "id" = $1 and ${i} = ${i}`;
    const names = Array.from({ length: 520 }, (_, i) => nameOf(text(i), 1));
    expect(names.filter((name) => name !== undefined)).toHaveLength(512);
    expect(nameOf(text(519), 1)).toBeUndefined();
    expect(nameOf(text(3), 1)).toBe(names[3]);
  });
});

interface Scratch {
  t: { id: string; a: string };
}

describeOnPostgres('named statements on PostgreSQL', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it('prepares a statement once per connection, and it keeps working after a migration adds a column', async () => {
    const schema = `names_${randomBytes(6).toString('hex')}`;
    await asAdmin((admin) =>
      admin.query(
        `CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.t (id text PRIMARY KEY, a text)`,
      ),
    );
    cleanup.push(async () => {
      await asAdmin((admin) => admin.query(`DROP SCHEMA ${schema} CASCADE`));
    });
    // One connection, so the statements prepared on it are the ones listed below.
    const pool = new PostgresPool({
      connectionString: postgresUrl,
      timeoutMs: 5000,
      poolSize: 1,
      schema,
    });
    const db = new Kysely<Scratch>({ dialect: leasedPostgresDialect(pool) });
    cleanup.push(() => db.destroy());

    await db.insertInto('t').values({ id: 'x', a: 'first' }).execute();
    const named = () => db.selectFrom('t').select(['id', 'a']).where('id', '=', 'x').execute();
    const starred = () => db.selectFrom('t').selectAll().where('id', '=', 'x').execute();
    for (let i = 0; i < 3; i++) expect(await named()).toEqual([{ id: 'x', a: 'first' }]);
    expect(await starred()).toEqual([{ id: 'x', a: 'first' }]);

    const prepared = await pool.query<{ name: string; statement: string }>({
      text: 'SELECT name, statement FROM pg_prepared_statements ORDER BY statement',
    });
    expect(prepared.rows.map((row) => row.statement)).toEqual([
      'insert into "t" ("id", "a") values ($1, $2)',
      'select "id", "a" from "t" where "id" = $1',
    ]);

    // Another instance upgrading first: the named plan is re-planned by the server, and the
    // `*` read, never prepared, sees the new column instead of failing with 0A000.
    await asAdmin((admin) => admin.query(`ALTER TABLE ${schema}.t ADD COLUMN b text`));
    expect(await named()).toEqual([{ id: 'x', a: 'first' }]);
    expect(await starred()).toEqual([{ id: 'x', a: 'first', b: null }]);
  });
});
