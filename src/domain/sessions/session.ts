import { toIso } from '../../lib/clock.js';
import { type Identity, type IdentityRecord, toIdentity } from '../identities/identity.js';
import type { Assurance } from '../sign-in/method.js';
import type { SignInMethodId } from '../sign-in/methods.js';

/** The sign-in method a session was made by (`authenticated_via`). */
export type AuthenticationMethod = SignInMethodId;

export interface SessionRecord {
  id: string;
  token_hash: string;
  identity_id: string;
  authenticated_via: AuthenticationMethod;
  /** The assurance the sign-in reached: `aal2` after a second factor (docs/two-factor.md). */
  aal: Assurance;
  issued_at: number;
  expires_at: number;
  revoked_at: number | null;
}

/** The public Session object of docs/api.md 2.3. */
export interface Session {
  id: string;
  identity: Identity;
  issued_at: string;
  expires_at: string;
  authenticated_via: AuthenticationMethod;
  aal: Assurance;
}

export function toSession(session: SessionRecord, identity: IdentityRecord): Session {
  return {
    id: session.id,
    identity: toIdentity(identity),
    issued_at: toIso(session.issued_at),
    expires_at: toIso(session.expires_at),
    authenticated_via: session.authenticated_via,
    aal: session.aal,
  };
}

/** A freshly minted session and the raw token, which exists only in this response. */
export interface MintedSession {
  session: Session;
  token: string;
}
