import type { Kysely } from 'kysely';
import type { Store } from '../domain/store.js';
import { auditQueries } from './queries/audit.js';
import { flowQueries } from './queries/flows.js';
import { identityQueries } from './queries/identities.js';
import { linkQueries } from './queries/links.js';
import { rateLimitQueries } from './queries/rate-limits.js';
import { serviceTokenQueries } from './queries/service-tokens.js';
import { sessionQueries } from './queries/sessions.js';
import type { Database } from './schema.js';

export type { Store };

/** The process-level handle: a Store plus lifecycle. */
export interface StoreHandle extends Store {
  readonly dialect: 'sqlite' | 'postgres';
  migrate(): Promise<string[]>;
  /** Cheap round trip used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export function createStore(db: Kysely<Database>, inTransaction = false): Store {
  return {
    ...identityQueries(db),
    ...sessionQueries(db),
    ...serviceTokenQueries(db),
    ...auditQueries(db),
    ...rateLimitQueries(db),
    ...flowQueries(db),
    ...linkQueries(db),
    transaction(work) {
      if (inTransaction) return work(this);
      return db.transaction().execute((tx) => work(createStore(tx, true)));
    },
  };
}
