import type { ZxcvbnFactory } from '@zxcvbn-ts/core';

/**
 * zxcvbn's matchers grow faster than linearly with length: 256 characters cost hundreds of
 * milliseconds of main-thread CPU, 64 a few. Only the first 64 are scored; a longer password
 * whose first 64 characters are guessable is still refused.
 */
const SCORED_LENGTH = 64;

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
