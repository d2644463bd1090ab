import type { Actor, AuditLog } from '../audit/audit-log.js';
import { parseUsername } from '../identities/identity.js';

/**
 * An end user acting through the browser endpoints. No service token is involved, so there
 * is no service id; `browser` names the actor the way `cli` names the command-line tool
 * (a service token's row always has its id, so the two cannot be confused).
 */
export const BROWSER_ACTOR: Actor = { service_name: 'browser', service_id: null };

/** What is known about one password submission to a flow, filled in as it gets further. */
export interface SignInAttempt {
  flowId: string;
  /** The connection's peer, until the submission's stated client address was accepted. */
  address: string;
  /**
   * Normalised. Null when missing or when it cannot be a username: arbitrary text (up to
   * the body limit, or a password typed into the wrong field) is not worth keeping.
   */
  username: string | null;
  /** The identity the username names once it was looked up; the signed-in one on success. */
  identityId: string | null;
  sessionId: string | null;
}

export function signInAttempt(flowId: string, address: string): SignInAttempt {
  return { flowId, address, username: null, identityId: null, sessionId: null };
}

export function noteUsername(attempt: SignInAttempt, raw: unknown): void {
  attempt.username = typeof raw === 'string' ? parseUsername(raw) : null;
}

/**
 * One `login` row per password submission, with the code the submitter was answered
 * (`ok` on success), in the spirit of Keycloak's LOGIN / LOGIN_ERROR events. Buffered like
 * the other read-path rows: a sign-in must not wait for, nor fail on, its audit row. The
 * password is never part of the attempt, so it cannot reach the row.
 */
export function recordSignIn(audit: AuditLog, attempt: SignInAttempt, outcome: string): void {
  audit.enqueue(BROWSER_ACTOR, {
    action: 'login',
    target_identity: attempt.identityId,
    outcome,
    details: {
      flow_id: attempt.flowId,
      username: attempt.username,
      address: attempt.address,
      ...(attempt.sessionId === null ? {} : { session_id: attempt.sessionId }),
    },
  });
}
