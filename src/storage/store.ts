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
  | 'findIdentityById'
  | 'findOidcModel'
  | 'findOidcModelByUid'
  | 'findOidcClient'
  | 'findOidcAccessToken'
>;

/** The OpenID provider's writes each dialect prepares (sqlite/ and postgres/ oidc-writes.ts). */
export type OidcWrites = Pick<Store, 'upsertOidcModel' | 'consumeOidcModel'>;

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
 * Built once for the process and once per transaction. `Object.assign`, not an object
 * literal of spreads: V8 builds a literal that spreads this many methods about 20 times
 * slower (about 55 µs against 3 µs), a cost every sign-in's transaction would pay.
 */
export function createStore(
  db: Kysely<Database>,
  transactionWrites?: TransactionWrites,
  inTransaction = false,
): Store {
  const transactional: Pick<Store, 'transaction'> = {
    transaction(work) {
      if (inTransaction) return work(store);
      return db.transaction().execute((tx) => {
        const txStore = createStore(tx, undefined, true);
        return work(transactionWrites ? Object.assign(txStore, transactionWrites(tx)) : txStore);
      });
    },
  };
  // Object.assign is typed for up to four sources, so the parts go in groups (onto
  // fresh objects of their own): a method no part provides stays a type error.
  const store: Store = Object.assign(
    Object.assign(
      identityQueries(db),
      sessionQueries(db),
      serviceTokenQueries(db),
      transferQueries(db),
    ),
    Object.assign(auditQueries(db), rateLimitQueries(db), flowQueries(db), linkQueries(db)),
    Object.assign(
      tokenFormatQueries(db),
      secondFactorQueries(db),
      passkeyQueries(db),
      oidcQueries(db),
    ),
    Object.assign(
      Object.assign(outboxQueries(db), adminQueries(db), mailCodeQueries(db), webhookQueries(db)),
      Object.assign(providerAuthorizationQueries(db), recoveryFlowQueries(db), transactional),
    ),
  );
  return store;
}
