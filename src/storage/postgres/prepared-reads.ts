import type { IdentityRecord } from '../../domain/identities/identity.js';
import type { OidcClientRecord } from '../../domain/oidc/client.js';
import type { OidcModelRecord } from '../../domain/oidc/model.js';
import type { ServiceTokenRecord } from '../../domain/service-tokens/service-token.js';
import type { PreparedReads } from '../store.js';
import { accessTokenRead, oidcSql, postgresJsonField } from '../queries/oidc.js';
import { type SessionCheckTuple, fromSessionCheckTuple, hotPathSql } from '../queries/sessions.js';
import type { PostgresPool } from './pool.js';

/**
 * The reads of the hottest paths (the session check; the OpenID provider's lookups of its
 * codes, tokens, grants and clients) as named prepared statements: PostgreSQL parses and
 * plans each once per connection instead of on every request, and no Kysely query is
 * built or compiled. Every call still reads the database (nothing is cached, so a revocation or a
 * disable is seen by the next request). `pool.query` takes an idle connection, never one
 * holding a transaction, so these read committed data only; reads inside a transaction go
 * through the transaction's own store.
 *
 * Each read answers one JSON value (`jsonRow`) instead of its columns.
 */
export function postgresPreparedReads(pool: PostgresPool): PreparedReads {
  const sql = hotPathSql('$1');
  const oidc = oidcSql((n) => `$${n}`, postgresJsonField);

  /** A prepared read answering one JSON value (`jsonRow`), or undefined without a row. */
  function read<Value>(name: string, select: string, as: 'array' | 'object') {
    const text = jsonRow(select, as);
    return async (values: unknown[]): Promise<Value | undefined> =>
      (await pool.query<[Value]>({ name, text, values, rowMode: 'array' })).rows[0]?.[0];
  }

  const sessionCheck = read<SessionCheckTuple>(
    'tessera_session_check',
    sql.sessionCheckByTokenHash,
    'array',
  );
  const serviceToken = read<ServiceTokenRecord>(
    'tessera_service_token_by_hash',
    sql.serviceTokenByHash,
    'object',
  );
  const identity = read<IdentityRecord>('tessera_identity_by_id', sql.identityById, 'object');
  const model = read<OidcModelRecord>('tessera_oidc_model_by_id', oidc.modelById, 'object');
  const modelByUid = read<OidcModelRecord>('tessera_oidc_model_by_uid', oidc.modelByUid, 'object');
  const client = read<OidcClientRecord>('tessera_oidc_client_by_id', oidc.clientById, 'object');
  const accessToken = read<unknown[]>('tessera_oidc_access_token', oidc.accessToken, 'array');

  return {
    async findSessionByTokenHash(tokenHash) {
      const row = await sessionCheck([tokenHash]);
      return row && fromSessionCheckTuple(row, tokenHash);
    },
    findServiceTokenByHash: (tokenHash) => serviceToken([tokenHash]),
    findIdentityById: (id) => identity([id]),
    findOidcModel: (kind, id, now) => model([kind, id, now]),
    findOidcModelByUid: (kind, uid, now) => modelByUid([kind, uid, now]),
    findOidcClient: (id) => client([id]),
    async findOidcAccessToken(id, now) {
      const row = await accessToken([now, now, id, now]);
      return row && accessTokenRead(row);
    },
  };
}

/**
 * `SELECT a, b FROM …` as `SELECT json_build_array(a, b) FROM …` (or json_build_object,
 * keyed by the column names): one column of type json, which pg hands to JSON.parse.
 *
 * Why: pg asks PostgreSQL to describe the result on every execution, even of a prepared
 * statement, and for every column of every answer parses a field description, looks up a
 * type parser and builds its row template again (Result.addFields: 7% of whoami's main
 * thread with 16 columns, beside the parsing of each value); one JSON text costs less
 * (the session check: 79-85 against 66-72 µs of Node's CPU per query here, 10 at a time).
 * The values keep their types: PostgreSQL writes BIGINT and INTEGER as JSON numbers (the
 * pool parses INT8 to a number anyway; millisecond times are far below 2^53), text as
 * strings, NULL as null. Both functions take at most 100 arguments: the widest read here,
 * the access token's, has 46 columns.
 */
function jsonRow(select: string, as: 'array' | 'object'): string {
  const from = select.indexOf(' FROM ');
  if (!select.startsWith('SELECT ') || from < 0) throw new Error(`not a plain SELECT: ${select}`);
  const columns = select.slice('SELECT '.length, from).split(', ');
  const values = as === 'array' ? columns : columns.flatMap((column) => [`'${column}'`, column]);
  return `SELECT json_build_${as}(${values.join(', ')})${select.slice(from)}`;
}
