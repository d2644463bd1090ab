import type { Kysely } from 'kysely';
import type { Store } from '../domain/store.js';
import { adminQueries } from './queries/admin.js';
import { mailCodeQueries } from './queries/mail-codes.js';
import { auditQueries } from './queries/audit.js';
import { flowQueries } from './queries/flows.js';
import { identityQueries } from './queries/identities.js';
import { linkQueries } from './queries/links.js';
import { passkeyQueries } from './queries/passkeys.js';
import { oidcQueries } from './queries/oidc.js';
import { outboxQueries } from './queries/outbox.js';
import { rateLimitQueries } from './queries/rate-limits.js';
import { secondFactorQueries } from './queries/second-factor.js';
import { serviceTokenQueries } from './queries/service-tokens.js';
import { sessionQueries } from './queries/sessions.js';
import { tokenFormatQueries } from './queries/token-formats.js';
import { transferQueries } from './queries/transfer.js';
import { webhookQueries } from './queries/webhooks.js';
import { providerAuthorizationQueries } from './queries/provider-authorizations.js';
import { recoveryFlowQueries } from './queries/recovery-flows.js';
import type { Database } from './schema.js';

export type { Store };

/**
 * The reads each dialect answers with statements prepared once on its own connection
 * (sqlite/ and postgres/ prepared-reads.ts): the session check's and the OpenID provider's.
 */
export type PreparedReads = Pick<
  Store,
  | 'findSessionByTokenHash'
  | 'findServiceTokenByHash'
  | 'findCallerAndSession'
  | 'findIdentityById'
  | 'findCallerAndIdentity'
  | 'findOidcModel'
  | 'findOidcModelByUid'
  | 'findOidcClient'
  | 'findOidcToken'
>;

/** The OpenID provider's writes each dialect prepares (sqlite/ and postgres/ oidc-writes.ts). */
export type OidcWrites = Pick<Store, 'upsertOidcModel' | 'consumeOidcModel' | 'writeOidcModels'>;

/** The process-level handle: a Store plus lifecycle. */
export interface StoreHandle extends Store {
  readonly dialect: 'sqlite' | 'postgres';
  migrate(): Promise<string[]>;
  /** Cheap round trip used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Writes a dialect runs itself on a transaction's connection, replacing the Kysely queries
 * of the transaction's store (sqlite/open.ts, postgres/transaction-writes.ts).
 */
export type TransactionWrites = (tx: Kysely<Database>) => Partial<Store>;

/**
 * The query groups, each a function of the connection (the process's, or a transaction's).
 * Where two groups name the same method, the later one's wins.
 */
const QUERY_GROUPS = [
  identityQueries,
  sessionQueries,
  serviceTokenQueries,
  transferQueries,
  auditQueries,
  rateLimitQueries,
  flowQueries,
  linkQueries,
  tokenFormatQueries,
  secondFactorQueries,
  passkeyQueries,
  oidcQueries,
  outboxQueries,
  adminQueries,
  mailCodeQueries,
  webhookQueries,
  providerAuthorizationQueries,
  recoveryFlowQueries,
] as const;

type Intersection<U> = (U extends unknown ? (part: U) => void : never) extends (
  part: infer I,
) => void
  ? I
  : never;
type Provided = Intersection<ReturnType<(typeof QUERY_GROUPS)[number]>> &
  Pick<Store, 'transaction'>;
/** A method of `Store` that no query group provides is a type error here. */
const everyMethodProvided: Provided extends Store ? true : never = true;
void everyMethodProvided;

/**
 * The process's store: every group built once. Callers spread it into their own (each
 * dialect's prepared statements replace some of its methods).
 */
export function createStore(db: Kysely<Database>, transactionWrites?: TransactionWrites): Store {
  const transactional: Pick<Store, 'transaction'> = {
    transaction: (work) =>
      db.transaction().execute((tx) => work(transactionStore(tx, transactionWrites?.(tx)))),
  };
  return Object.assign({}, ...QUERY_GROUPS.map((group) => group(db)), transactional) as Store;
}

/** A transaction's store: its connection and the groups its work has used so far. */
interface LazyStore {
  readonly db: Kysely<Database>;
  readonly built: (Record<string, unknown> | undefined)[];
}

let lazyPrototype: object | undefined;

/**
 * One getter per method, on a prototype every transaction's store shares: a method's group
 * is built on the transaction's connection when the work first uses one of its methods.
 * Building all of them per transaction (about 140 closures copied into one object) was
 * 40% of everything a link sign-in allocated and 10-20% of its CPU (bench/README.md).
 * The methods are not own properties: to override some, assign onto the store or onto
 * `Object.create(store)`; a spread (`{ ...store }`) would copy none of them.
 */
function lazyStorePrototype(db: Kysely<Database>): object {
  if (lazyPrototype) return lazyPrototype;
  const prototype = {};
  QUERY_GROUPS.forEach((group, index) => {
    // Built once on any connection, for the names of its methods only.
    for (const name of Object.keys(group(db))) {
      Object.defineProperty(prototype, name, {
        configurable: true,
        get(this: LazyStore) {
          return (this.built[index] ??= group(this.db) as unknown as Record<string, unknown>)[name];
        },
        // An override (a dialect's statement, a test's wrapper) becomes an own property.
        set(this: LazyStore, value: unknown) {
          Object.defineProperty(this, name, { value, writable: true, enumerable: true });
        },
      });
    }
  });
  return (lazyPrototype = prototype);
}

function transactionStore(tx: Kysely<Database>, writes: Partial<Store> | undefined): Store {
  const store = Object.create(lazyStorePrototype(tx)) as LazyStore & Store;
  Object.assign(store, { db: tx, built: [] });
  store.transaction = (work) => work(store);
  return writes ? Object.assign(store, writes) : store;
}
