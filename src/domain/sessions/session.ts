import { toIso } from '../../lib/clock.js';
import { type Identity, type IdentityRecord, toIdentity } from '../identities/identity.js';
import type { Assurance } from '../sign-in/method.js';
import type { SignInMethodId } from '../sign-in/methods.js';

/**
 * How a session was made (`authenticated_via`): a sign-in method, or `recovery`, a new
 * password set with a mailed code (docs/recovery.md), which is no sign-in method of the
 * login page but mints its session through the same completeSignIn.
 */
export type AuthenticationMethod = SignInMethodId | typeof RECOVERY_SIGN_IN;
export const RECOVERY_SIGN_IN = 'recovery';

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
  /**
   * When the session was last presented (whoami, verify), to LAST_USE_GRANULARITY_MS
   * (last-use.ts); its sign-in counts as a use. NULL for sessions minted before it was kept.
   */
  last_used_at: number | null;
}

/**
 * The device a session was started from, for the user's and support's session lists only:
 * never part of the Session object (whoami, verify). Null when not known, such as a service
 * endpoint's sign-in whose caller did not state it.
 */
export interface SessionDevice {
  /** The User-Agent header as sent, cut to MAX_USER_AGENT_LENGTH. */
  user_agent: string | null;
  /** The end user's IP address. */
  client_address: string | null;
}

/** A live session as the lists show it (never its token hash). */
export type SessionListing = Omit<SessionRecord, 'token_hash'> & SessionDevice;

/** Longer User-Agent headers are cut: the list needs the product tokens at the front. */
export const MAX_USER_AGENT_LENGTH = 512;

export function sessionDevice(userAgent: unknown, clientAddress: string | null): SessionDevice {
  return {
    user_agent:
      typeof userAgent === 'string' && userAgent.trim() !== ''
        ? userAgent.trim().slice(0, MAX_USER_AGENT_LENGTH)
        : null,
    client_address: clientAddress,
  };
}

/** No device known (the CLI, tests). */
export const UNKNOWN_DEVICE: SessionDevice = { user_agent: null, client_address: null };

/** The public Session object of docs/api.md 2.3. */
export interface Session {
  id: string;
  identity: Identity;
  issued_at: string;
  expires_at: string;
  authenticated_via: AuthenticationMethod;
  aal: Assurance;
}

/** Also renders a listed session (SessionListing): the token hash is never read. */
export function toSession(
  session: Omit<SessionRecord, 'token_hash'>,
  identity: IdentityRecord,
): Session {
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
