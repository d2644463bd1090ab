import type { AuditRecord } from '../audit/audit.js';
import type { IdentityState, IdentitySummary } from '../identities/identity.js';

/** An identity holding the operator role (docs/admin.md). */
export interface OperatorRecord {
  identity_id: string;
  granted_at: number;
}

/** The identities list of the console: every condition given must hold. */
export interface IdentitySearch {
  /** Part of the username (lowercase), or an exact id. */
  text?: string;
  state?: IdentityState;
  /** Newest first (created_at, then id); skips `offset` rows, answers at most `limit`. */
  offset: number;
  limit: number;
}

/** The audit page's filters: every condition given must hold. */
export interface AuditSearch {
  action?: string;
  /** The actor: a service name (`cli`, `browser`, `admin`, a token's name) or an actor id. */
  actor?: string;
  target_identity?: string;
  outcome?: string;
  /** Epoch ms, inclusive. */
  since?: number;
  /** Epoch ms, exclusive. */
  until?: number;
  /** Newest first (`at`, then id). */
  offset: number;
  limit: number;
}

/** Persistence the operator role and the admin console need. */
export interface AdminStore {
  /** False when the identity already held the role (its row stays as it was). */
  insertOperator(record: OperatorRecord): Promise<boolean>;
  /** False when the identity did not hold the role. */
  deleteOperator(identityId: string): Promise<boolean>;
  findOperator(identityId: string): Promise<OperatorRecord | undefined>;
  /** Oldest grant first, with the identities. */
  listOperators(): Promise<(OperatorRecord & { identity: IdentitySummary })[]>;
  searchIdentities(search: IdentitySearch): Promise<IdentitySummary[]>;
  searchAuditRecords(search: AuditSearch): Promise<AuditRecord[]>;
}
