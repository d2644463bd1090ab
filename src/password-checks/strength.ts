import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * zxcvbn's matchers grow faster than linearly with length: 256 characters cost hundreds of
 * milliseconds of CPU, 32 a few. Only the first 32 are scored: a longer password whose
 * first 32 characters are guessable ("passwordpassword…") is still refused, and 32
 * characters of anything less are already strong.
 */
const SCORED_LENGTH = 32;

/**
 * The l33t matcher tries every substitution combination up to this many: the default (100)
 * lets a string of "4@$1!|0" characters cost tens of milliseconds; 20 keeps it to a few
 * without changing the scores of the l33t passwords people use.
 */
const L33T_MAX_SUBSTITUTIONS = 20;

/**
 * The estimator's thread may hold this much old-generation heap: its dictionaries keep
 * about 12 MiB, one estimate of 32 characters little more. The cap is what keeps it small:
 * without one, V8 lets the estimates' garbage pile up to 50-70 MB before collecting it.
 */
const WORKER_OLD_SPACE_MB = 64;

/**
 * The worker thread, as source text (see checkpointer.ts for why not a file): it requires
 * the estimator by the paths resolved here and answers one message per password.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { ZxcvbnFactory } = require(workerData.core);
const common = require(workerData.common);
const zxcvbn = new ZxcvbnFactory({
  dictionary: { ...common.dictionary },
  graphs: common.adjacencyGraphs,
  maxLength: workerData.maxLength,
  l33tMaxSubstitutions: workerData.l33tMaxSubstitutions,
});
parentPort.on('message', ({ id, password, userInputs }) => {
  try {
    parentPort.postMessage({ id, score: zxcvbn.check(password, userInputs).score });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message || error) });
  }
});
`;

interface Answer {
  id: number;
  score?: number;
  error?: string;
}

interface Waiting {
  resolve(score: number): void;
  reject(error: Error): void;
}

/**
 * zxcvbn on a worker thread of its own. An estimate costs about a millisecond of CPU and
 * allocates about 2 MB: on the server's thread that was a stall of every other request for
 * each sign-up, and under a burst of sign-ups the garbage grew the process by 50-70 MB
 * (docs/password-policy.md). The thread starts on the first estimate (the dictionaries, 8 MB,
 * load there), is unreferenced while idle so it never keeps a process alive, and a thread
 * that died (out of its heap cap, say) fails the estimates it held and is replaced by the
 * next one.
 */
export class PasswordEstimator {
  #worker: Worker | null = null;
  #next = 0;
  readonly #waiting = new Map<number, Waiting>();

  /** `oldSpaceMb`: the thread's heap cap (tests give one too small to load the dictionaries). */
  constructor(private readonly oldSpaceMb = WORKER_OLD_SPACE_MB) {}

  score(password: string, userInputs: string[]): Promise<number> {
    const worker = this.#current();
    const id = this.#next++;
    if (this.#waiting.size === 0) worker.ref();
    return new Promise<number>((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      worker.postMessage({ id, password, userInputs });
    });
  }

  #current(): Worker {
    if (this.#worker !== null) return this.#worker;
    const require = createRequire(import.meta.url);
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      // The source is CommonJS: the parent's flags (`--input-type=module`, a loader) are not.
      execArgv: [],
      workerData: {
        core: require.resolve('@zxcvbn-ts/core'),
        common: require.resolve('@zxcvbn-ts/language-common'),
        maxLength: SCORED_LENGTH,
        l33tMaxSubstitutions: L33T_MAX_SUBSTITUTIONS,
      },
      resourceLimits: { maxOldGenerationSizeMb: this.oldSpaceMb },
    });
    worker.unref();
    worker.on('message', (answer: Answer) => this.#answer(worker, answer));
    worker.once('error', (error) => this.#end(worker, error));
    worker.once('exit', (code) =>
      this.#end(worker, new Error(`the password estimator's thread exited with code ${code}`)),
    );
    this.#worker = worker;
    return worker;
  }

  #answer(worker: Worker, answer: Answer): void {
    const waiting = this.#waiting.get(answer.id);
    if (waiting === undefined) return;
    this.#waiting.delete(answer.id);
    if (this.#waiting.size === 0) worker.unref();
    if (answer.score !== undefined) waiting.resolve(answer.score);
    else waiting.reject(new Error(`the password estimator failed: ${answer.error}`));
  }

  #end(worker: Worker, error: Error): void {
    if (this.#worker !== worker) return;
    this.#worker = null;
    const waiting = [...this.#waiting.values()];
    this.#waiting.clear();
    for (const each of waiting) each.reject(error);
  }
}

let shared: PasswordEstimator | undefined;

/** zxcvbn's 0-4 score, estimated off the event loop; the estimator loads on first use only. */
export function zxcvbnScore(password: string, userInputs: string[]): Promise<number> {
  shared ??= new PasswordEstimator();
  return shared.score(password, userInputs);
}
