import type { PasswordPolicy } from '../domain/password-policy/policy.js';
import { commonPasswordChecker } from './common-passwords.js';
import { zxcvbnScore } from './strength.js';

/** The policy's outside parts: the offline list always, the estimator when a score is set. */
export function createPasswordPolicy(minScore: number): PasswordPolicy {
  return {
    isCommonPassword: commonPasswordChecker(),
    ...(minScore > 0 ? { strength: { minScore, score: zxcvbnScore } } : {}),
  };
}
