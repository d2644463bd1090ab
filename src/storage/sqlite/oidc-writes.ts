import type BetterSqlite3 from 'better-sqlite3';
import type { OidcModelRecord } from '../../domain/oidc/model.js';
import type { OidcSpend } from '../../domain/oidc/oidc-store.js';
import type { OidcWrites } from '../store.js';
import type { RawStatementOptions } from './raw-write.js';
import { modelValues, oidcSql, sqliteJsonField } from '../queries/oidc.js';
import { rawWriter } from './raw-write.js';

const SQL = oidcSql(() => '?', sqliteJsonField);

/**
 * The provider's writes on every token request (a code or refresh token spent, the tokens
 * issued) as statements prepared once on the raw connection, instead of a Kysely build and
 * compile per call. Each commits on its own, as through Kysely, and under
 * SERVICE_SQLITE_SYNCHRONOUS=full its caller waits for the WAL sync like any Kysely commit
 * (`durable`): a spent code stays spent after a power cut. While one of Kysely's
 * transactions holds the connection the write goes through Kysely and waits its turn;
 * while another process holds the write lock it waits on timers (busy.ts). The spending
 * stays one conditional UPDATE: of any number of callers, on any instance, one changes the
 * row.
 */
export function sqliteOidcWrites(options: RawStatementOptions): OidcWrites {
  const { raw, fallback, timeoutMs, durable } = options;
  // Prepared on first use: the tables exist only once the store has been migrated.
  let prepared:
    | {
        upsert: BetterSqlite3.Statement;
        consume: BetterSqlite3.Statement;
        /** One transaction: BEGIN IMMEDIATE takes the write lock before the spend is read. */
        spendAndUpsert: (spend: OidcSpend | null, records: readonly OidcModelRecord[]) => boolean;
      }
    | undefined;
  const statements = () => {
    if (prepared) return prepared;
    const upsert = raw.prepare(SQL.upsertModel);
    const consume = raw.prepare(SQL.consumeModel);
    const both = raw.transaction(
      (spend: OidcSpend | null, records: readonly OidcModelRecord[]): boolean => {
        if (spend && consume.run(spend.at, spend.kind, spend.id).changes !== 1) return false;
        for (const record of records) upsert.run(modelValues(record));
        return true;
      },
    );
    return (prepared = {
      upsert,
      consume,
      spendAndUpsert: (spend, records) => both.immediate(spend, records),
    });
  };

  const write = rawWriter(raw, timeoutMs, durable);

  return {
    upsertOidcModel: (record) =>
      write(
        () => {
          statements().upsert.run(modelValues(record));
        },
        () => fallback.upsertOidcModel(record),
      ),
    consumeOidcModel: (kind, id, at) =>
      write(
        () => statements().consume.run(at, kind, id).changes === 1,
        () => fallback.consumeOidcModel(kind, id, at),
      ),
    writeOidcModels: (spend, upserts) =>
      write(
        () => statements().spendAndUpsert(spend, upserts),
        () => fallback.writeOidcModels(spend, upserts),
      ),
  };
}
