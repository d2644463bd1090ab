import type { Actor, AuditLog } from '../audit/audit-log.js';
import type { SignInNotes } from '../sign-in/method.js';

/**
 * An end user acting through the browser endpoints. No service token is involved, so there
 * is no service id; `browser` names the actor the way `cli` names the command-line tool
 * (a service token's row always has its id, so the two cannot be confused).
 */
export const BROWSER_ACTOR: Actor = { service_name: 'browser', service_id: null };

/** What is known about one submission to a flow, filled in as it gets further. */
export interface SignInAttempt extends SignInNotes {
  flowId: string;
  /** The connection's peer, until the submission's stated client address was accepted. */
  address: string;
  /**
   * What the submission claims, from its method's `claim` (a normalised username, say):
   * never a secret. Its keys sit beside flow_id and address in the row, so a method's
   * claim never uses those names (nor `sign_in_method`).
   */
  claim: Record<string, unknown>;
  /**
   * The outcome to record instead of the answer's code: `second_factor_required` when the
   * first factor was right and the flow now waits for the second (no session yet).
   */
  outcome?: string;
}

export function signInAttempt(
  flowId: string,
  address: string,
  claim: Record<string, unknown>,
  signInMethod?: string,
): SignInAttempt {
  const attempt: SignInAttempt = { flowId, address, claim, identityId: null, sessionId: null };
  if (signInMethod !== undefined) attempt.signInMethod = signInMethod;
  return attempt;
}

/**
 * One `login` row per submission to a flow, whatever its method, with the code the
 * submitter was answered (`ok` on success), in the spirit of Keycloak's LOGIN / LOGIN_ERROR
 * events. Buffered like the other read-path rows: a sign-in must not wait for, nor fail on,
 * its audit row. No secret is part of the attempt, so none can reach the row.
 */
export function recordSignIn(audit: AuditLog, attempt: SignInAttempt, outcome: string): void {
  audit.enqueue(BROWSER_ACTOR, {
    action: 'login',
    target_identity: attempt.identityId,
    outcome,
    details: {
      flow_id: attempt.flowId,
      ...attempt.claim,
      ...(attempt.signInMethod === undefined ? {} : { sign_in_method: attempt.signInMethod }),
      address: attempt.address,
      ...(attempt.sessionId === null ? {} : { session_id: attempt.sessionId }),
    },
  });
}
