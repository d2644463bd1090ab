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

/**
 * A sign-in's view of the flow's live challenge, left in place: `matches` is the check the
 * library runs against the response's challenge, and `take` (for the minting transaction)
 * removes it, true only if it was still this very challenge. So of racing submissions only
 * the one that mints uses it, and one that loses its flow to another spends nothing.
 * Null when the binding has none: never issued, used already, or expired.
 */
export async function peekChallenge(
  store: Pick<Store, 'findWebAuthnChallenge'>,
  binding: ChallengeBinding,
  now: number,
): Promise<{
  matches: (challenge: string) => boolean;
  take: (tx: Pick<Store, 'takeWebAuthnChallenge'>) => Promise<boolean>;
} | null> {
  const key = bindingKey(binding);
  const found = await store.findWebAuthnChallenge(key, now);
  if (!found) return null;
  return {
    matches: (challenge) => secretsEqual(found.challenge_hash, hashToken(challenge)),
    async take(tx) {
      const taken = await tx.takeWebAuthnChallenge(key, now);
      return taken !== undefined && taken.challenge_hash === found.challenge_hash;
    },
  };
}

/** The WebAuthn user handle of an identity: its id's bytes, nothing personal. */
export function userHandleOf(identityId: string): Uint8Array {
  return new TextEncoder().encode(identityId);
}
