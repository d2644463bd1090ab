import type { Actor } from '../../audit/audit-log.js';
import { DomainError } from '../../errors.js';
import type { MintedSession, SessionDevice } from '../../sessions/session.js';
import type { Store } from '../../store.js';
import { type CompleteSignInDeps, completeSignIn } from '../complete-sign-in.js';
import { signInNotes } from '../method.js';
import { type PasswordInput, type PasswordMethodDeps, passwordMethod } from './password-method.js';

export interface AuthenticatePasswordDeps extends PasswordMethodDeps, CompleteSignInDeps {
  store: PasswordMethodDeps['store'] & Pick<Store, 'transaction'>;
}

/** POST /v1/authenticate/password: the method (limit, verify), then the session and its audit row. */
export async function authenticateWithPassword(
  deps: AuthenticatePasswordDeps,
  actor: Actor,
  input: PasswordInput,
  device: SessionDevice,
): Promise<MintedSession> {
  const outcome = await passwordMethod.authenticate(deps, input, signInNotes());
  if ('failure' in outcome) throw new DomainError(outcome.failure);
  const { identity } = outcome;
  return deps.store.transaction((tx) =>
    completeSignIn(
      deps,
      tx,
      identity,
      passwordMethod,
      { actor, action: 'authenticate_password' },
      device,
    ),
  );
}
