import { hashToken, secretsEqual } from '../../lib/tokens.js';
import type { Store } from '../store.js';
import { type ChallengeBinding, bindingKey } from './passkey.js';

/** Keeps the hash of a new challenge for its binding, replacing the binding's earlier one. */
export async function keepChallenge(
  store: Pick<Store, 'putWebAuthnChallenge'>,
  binding: ChallengeBinding,
  challenge: string,
  expiresAt: number,
): Promise<void> {
  await store.putWebAuthnChallenge({
    binding: bindingKey(binding),
    flow_id: 'flowId' in binding ? binding.flowId : null,
    session_id: 'sessionId' in binding ? binding.sessionId : null,
    challenge_hash: hashToken(challenge),
    expires_at: expiresAt,
  });
}

/**
 * Takes the binding's live challenge (it is gone afterwards, whatever the verification
 * says) and answers the check the library runs against the response's challenge; null when
 * the binding has none left: never issued, used already, or expired.
 */
export async function takeChallenge(
  store: Pick<Store, 'takeWebAuthnChallenge'>,
  binding: ChallengeBinding,
  now: number,
): Promise<((challenge: string) => boolean) | null> {
  const taken = await store.takeWebAuthnChallenge(bindingKey(binding), now);
  if (!taken) return null;
  return (challenge) => secretsEqual(taken.challenge_hash, hashToken(challenge));
}

/** The WebAuthn user handle of an identity: its id's bytes, nothing personal. */
export function userHandleOf(identityId: string): Uint8Array {
  return new TextEncoder().encode(identityId);
}
