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

/** Sign-ins of one method and result in one time bucket (the overview's charts). */
export interface SignInCount {
  /** The bucket's index: its start is `bucket * bucketMs` (epoch ms). */
  bucket: number;
  /** A sign-in method id, or `other`. */
  method: string;
  result: 'ok' | 'failed';
  count: number;
}

/** Rows of one time bucket. */
export interface BucketCount {
  bucket: number;
  count: number;
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
  /**
   * Sign-in audit rows (`login`, `authenticate_password`, `authenticate_link`) at or after
   * `since`, counted per `bucketMs`, method (one of `methods`, else `other`) and result.
   * A first factor waiting for the second (`second_factor_required`) is neither.
   */
  countSignIns(since: number, bucketMs: number, methods: readonly string[]): Promise<SignInCount[]>;
  /** Sessions neither revoked nor expired at `now`. */
  countLiveSessions(now: number): Promise<number>;
  /** Identities created at or after `since`, per `bucketMs`. */
  countNewIdentities(since: number, bucketMs: number): Promise<BucketCount[]>;
}
