import { randomInt } from 'node:crypto';
import { hashToken, secretsEqual } from '../../lib/tokens.js';
import type { RecoveryCodeRecord } from './second-factor-store.js';

export const RECOVERY_CODE_COUNT = 10;

/** No 0/o, 1/l/i: codes are read off paper and typed by hand. 32 letters, 5 bits each. */
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const GROUPS = 4;
const GROUP_LENGTH = 4;

/**
 * Ten fresh codes such as `k7dq-m2xa-9fpe-w3hn`: 16 characters of a 31-letter alphabet,
 * about 79 bits each, so a SHA-256 of the code is enough at rest (nothing to brute-force
 * offline), as for session tokens.
 */
export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () =>
    Array.from({ length: GROUPS }, () =>
      Array.from({ length: GROUP_LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join(''),
    ).join('-'),
  );
}

/** What is compared: lowercase, without the dashes and spaces people type or leave out. */
export function normalizeRecoveryCode(raw: string): string {
  return raw.toLowerCase().replace(/[\s-]+/g, '');
}

export function hashRecoveryCode(raw: string): string {
  return hashToken(`tessera-recovery:${normalizeRecoveryCode(raw)}`);
}

/** The stored code `raw` is, compared in constant time with each (at most ten). */
export function matchRecoveryCode(
  unused: readonly RecoveryCodeRecord[],
  raw: string,
): RecoveryCodeRecord | undefined {
  const hash = hashRecoveryCode(raw);
  let found: RecoveryCodeRecord | undefined;
  for (const code of unused) {
    // No early exit: every stored code is compared.
    if (secretsEqual(code.code_hash, hash)) found = code;
  }
  return found;
}
