import { TesseraError, errorFromAnswer } from './errors.js';

export interface RetryOptions {
  /** Retries after the first attempt (default 2, so at most 3 attempts); 0 turns retrying off. */
  retries?: number;
  /** First backoff delay in ms (default 200), doubled per retry, with full jitter. */
  baseDelayMs?: number;
  /** Cap on one backoff delay in ms (default 2000). */
  maxDelayMs?: number;
  /**
   * The longest `retry_after` (seconds) of a `rate_limited` answer the client waits out
   * (default 10). A longer one is reported at once: a login limit may be minutes away.
   */
  maxRetryAfterSeconds?: number;
}

export interface TransportOptions {
  /** Deadline of one attempt in ms, connection and answer included (default 10000). */
  timeoutMs?: number;
  retry?: RetryOptions;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Waits `ms` (tests replace it to see the delays). */
  sleep?: (ms: number) => Promise<void>;
}

/** Calls that create something or spend a sign-in attempt: repeated only when an answer says so. */
const UNSAFE = [/\/v1\/register/, /\/v1\/authenticate\//, /\/v1\/flows\/[^/]+\/password$/];

/** Statuses whose error body may carry a retryable code. */
const RETRY_STATUSES = new Set([429, 503, 504]);

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A fetch with a deadline per attempt and bounded retries on `rate_limited` (after its
 * `retry_after`), `unavailable` and `timeout`. Answered errors are retried for every call,
 * since the server answered them without acting. A call that got no answer (deadline,
 * broken connection) is retried only when repeating it cannot create or spend anything;
 * otherwise it is reported as `timeout`/`unavailable` with status 0.
 */
export function createTransport(options: TransportOptions = {}): typeof fetch {
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const timeoutMs = options.timeoutMs ?? 10_000;
  const retries = Math.max(0, options.retry?.retries ?? 2);
  const baseDelayMs = options.retry?.baseDelayMs ?? 200;
  const maxDelayMs = options.retry?.maxDelayMs ?? 2_000;
  const maxRetryAfterSeconds = options.retry?.maxRetryAfterSeconds ?? 10;
  const sleep = options.sleep ?? defaultSleep;

  const backoff = (attempt: number) =>
    Math.round(Math.random() * Math.min(maxDelayMs, baseDelayMs * 2 ** attempt));

  return async function tesseraFetch(input, init) {
    const request = new Request(input, init);
    const unsafe =
      request.method === 'POST' && UNSAFE.some((p) => p.test(new URL(request.url).pathname));
    for (let attempt = 0; ; attempt += 1) {
      const last = attempt >= retries;
      const deadline = AbortSignal.timeout(timeoutMs);
      const signal = AbortSignal.any([request.signal, deadline]);
      let response: Response;
      try {
        response = await fetchImpl(request.clone(), { signal });
      } catch (error) {
        if (request.signal.aborted) throw error;
        const code = deadline.aborted ? 'timeout' : 'unavailable';
        if (last || unsafe) throw new TesseraError(code, 0, undefined, undefined, { cause: error });
        await sleep(backoff(attempt));
        continue;
      }
      if (last || !RETRY_STATUSES.has(response.status)) return response;
      const failure = errorFromAnswer(
        response.status,
        await response
          .clone()
          .json()
          .catch(() => null),
      );
      let delay: number;
      if (failure.code === 'rate_limited') {
        const after = failure.retryAfter ?? 1;
        if (after > maxRetryAfterSeconds) return response;
        delay = after * 1000;
      } else if (failure.code === 'unavailable' || failure.code === 'timeout') {
        delay = backoff(attempt);
      } else {
        return response;
      }
      await response.body?.cancel();
      await sleep(delay);
    }
  };
}
