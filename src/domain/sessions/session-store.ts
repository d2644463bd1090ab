import type { TokenFormat } from '../../lib/tokens.js';
import type { IdentityRecord } from '../identities/identity.js';
import type { ServiceTokenRecord } from '../service-tokens/service-token.js';
import type { SessionUse } from './last-use.js';
import type { SessionDevice, SessionListing, SessionRecord } from './session.js';

export interface SessionWithIdentity {
  session: SessionRecord;
  identity: IdentityRecord;
}

/** A service's question about a session, read at once (`findCallerAndSession`). */
export interface CallerAndSession {
  serviceToken: ServiceTokenRecord | undefined;
  found: SessionWithIdentity | undefined;
}

export interface SessionStore {
  /**
   * `token_format` records how the token was minted (docs/tokens.md). Device fields may be
   * left out (NULL): a session minted with no device known.
   */
  insertSession(
    record: SessionRecord & Partial<SessionDevice> & { token_format: TokenFormat },
  ): Promise<void>;
  /** The hot path: one indexed lookup joining the identity. */
  findSessionByTokenHash(tokenHash: string): Promise<SessionWithIdentity | undefined>;
  /**
   * `findServiceTokenByHash` and `findSessionByTokenHash` together, for a service asking
   * about a session (`POST /v1/sessions/verify`): one round trip on PostgreSQL.
   */
  findCallerAndSession(
    serviceTokenHash: string,
    sessionTokenHash: string,
  ): Promise<CallerAndSession>;
  findSessionById(id: string): Promise<SessionRecord | undefined>;
  /** Sets revoked_at if not yet set; returns whether the row exists. */
  revokeSessionById(id: string, at: number): Promise<boolean>;
  revokeSessionByTokenHash(tokenHash: string, at: number): Promise<void>;
  /**
   * Revokes every live session of the identity, but `keep` when given; returns how many
   * were revoked.
   */
  revokeIdentitySessions(identityId: string, at: number, keep?: string): Promise<number>;
  /** Removes sessions past their expiry; revoked ones linger until then so revoke-by-id stays idempotent. */
  deleteExpiredSessions(now: number): Promise<number>;
  /**
   * Records uses, in one statement: a conditional UPDATE that changes each row only while
   * its `last_used_at` is NULL or at least `granularityMs` older than the use, so instances
   * recording the same session at once change it once, and an older use never overwrites
   * a newer one (of two uses of one id in a batch, the later counts). Unknown ids are
   * skipped.
   */
  touchSessions(uses: SessionUse[], granularityMs: number): Promise<void>;
  /** The identity's sessions neither revoked nor expired at `now`, newest first. */
  listLiveSessions(identityId: string, now: number): Promise<SessionListing[]>;
}
