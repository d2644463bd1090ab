import type { TokenFormat } from '../../lib/tokens.js';
import type { IdentityRecord } from '../identities/identity.js';
import type { SessionRecord } from './session.js';

export interface SessionWithIdentity {
  session: SessionRecord;
  identity: IdentityRecord;
}

export interface SessionStore {
  /** `token_format` records how the token was minted (docs/tokens.md). */
  insertSession(record: SessionRecord & { token_format: TokenFormat }): Promise<void>;
  /** The hot path: one indexed lookup joining the identity. */
  findSessionByTokenHash(tokenHash: string): Promise<SessionWithIdentity | undefined>;
  findSessionById(id: string): Promise<SessionRecord | undefined>;
  /** Sets revoked_at if not yet set; returns whether the row exists. */
  revokeSessionById(id: string, at: number): Promise<boolean>;
  revokeSessionByTokenHash(tokenHash: string, at: number): Promise<void>;
  /** Revokes every live session of the identity; returns how many were live. */
  revokeIdentitySessions(identityId: string, at: number): Promise<number>;
  /** Removes sessions past their expiry; revoked ones linger until then so revoke-by-id stays idempotent. */
  deleteExpiredSessions(now: number): Promise<number>;
}
