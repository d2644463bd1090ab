import type { ZxcvbnFactory } from '@zxcvbn-ts/core';

/**
 * zxcvbn's matchers grow faster than linearly with length: 256 characters cost hundreds of
 * milliseconds of main-thread CPU, 32 a few. Only the first 32 are scored: a longer password
 * whose first 32 characters are guessable ("passwordpassword…") is still refused, and 32
 * characters of anything less are already strong.
 */
const SCORED_LENGTH = 32;

let shared: Promise<ZxcvbnFactory> | undefined;

async function loadEstimator(): Promise<ZxcvbnFactory> {
  const [{ ZxcvbnFactory }, common] = await Promise.all([
    import('@zxcvbn-ts/core'),
    import('@zxcvbn-ts/language-common'),
  ]);
  return new ZxcvbnFactory({
    dictionary: { ...common.dictionary },
    graphs: common.adjacencyGraphs,
    maxLength: SCORED_LENGTH,
    // The l33t matcher tries every substitution combination up to this many: the default
    // (100) lets a string of "4@$1!|0" characters cost tens of milliseconds; 20 keeps it
    // to a few without changing the scores of the l33t passwords people use.
    l33tMaxSubstitutions: 20,
  });
}

/** zxcvbn's 0-4 score; the estimator (8 MB of dictionaries) loads on first use only. */
export async function zxcvbnScore(password: string, userInputs: string[]): Promise<number> {
  shared ??= loadEstimator().catch((error: unknown) => {
    shared = undefined;
    throw error;
  });
  return (await shared).check(password, userInputs).score;
}
