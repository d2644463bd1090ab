import { validationError } from '../errors.js';
import { nameTerms, restWithoutNames } from './context.js';
import { requireText } from '../text.js';

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 256;

/**
 * What the policy needs from outside the domain; the composition root supplies it, so the
 * domain names neither the list package nor the estimator.
 */
export interface PasswordPolicy {
  /** True when the password is on the offline list of common and breached passwords. */
  isCommonPassword(password: string): Promise<boolean>;
  /** Absent when no strength threshold is configured. */
  strength?: {
    /** Scores below this are refused (zxcvbn's scale, 0-4). */
    minScore: number;
    /** `userInputs` are words the estimate treats as known to an attacker. */
    score(password: string, userInputs: string[]): Promise<number>;
  };
}

/** Who is choosing the password: their names may not make it up. */
export interface PasswordContext {
  username: string;
  displayName?: string | null;
}

export const PASSWORD_MESSAGES = {
  length: `password must be between ${PASSWORD_MIN} and ${PASSWORD_MAX} characters long`,
  names:
    'password is built from the username or display name: choose one in which they are at most a small part',
  common:
    'password is in a list of commonly used or breached passwords: choose a longer, less common one, such as a few unrelated words',
  weak: 'password is too easy to guess: choose a longer, less predictable one, such as a few unrelated words',
} as const;

/**
 * NIST SP 800-63B: length in code points, no composition rules, and a refusal of values an
 * attacker tries first (a blocklist, the user's own names), plus an optional estimate.
 * Cheap checks run first so a refused password never costs the estimator. The message
 * never echoes the password.
 */
export async function requirePasswordPolicy(
  policy: PasswordPolicy,
  password: string,
  context: PasswordContext,
): Promise<void> {
  const length = [...password].length;
  if (length < PASSWORD_MIN || length > PASSWORD_MAX) {
    throw validationError(PASSWORD_MESSAGES.length);
  }
  // The hash is taken over the UTF-8 form, and C-string based verifiers cut at NUL should
  // hashes ever be exported: no lone surrogate, no NUL (docs/text-input.md).
  requireText('password', password, 'opaque');
  const names = [context.username, context.displayName ?? ''];
  // Built from the names: what is left without them would not pass on its own ("alice2024",
  // "Alice Smith 12345678"); a passphrase that merely contains a name still does.
  const rest = restWithoutNames(password, names);
  if (rest !== null && ([...rest].length < PASSWORD_MIN || (await policy.isCommonPassword(rest)))) {
    throw validationError(PASSWORD_MESSAGES.names);
  }
  if (await policy.isCommonPassword(password)) throw validationError(PASSWORD_MESSAGES.common);
  if (policy.strength && policy.strength.minScore > 0) {
    const score = await policy.strength.score(password, nameTerms(names));
    if (score < policy.strength.minScore) throw validationError(PASSWORD_MESSAGES.weak);
  }
}
