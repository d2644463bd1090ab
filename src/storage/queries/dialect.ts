import { type Kysely, PostgresAdapter } from 'kysely';
import type { Database } from '../schema.js';

/** True when `db` runs on PostgreSQL: for the few statements each database words its own way. */
export function onPostgres(db: Kysely<Database>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
