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
  /**
   * Deadline of one attempt in ms, from connecting to the last byte of the answer's body
   * (default 10000). A custom `fetch` must honour the signal it is given.
   */
  timeoutMs?: number;
  retry?: RetryOptions;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** Waits `ms` (tests replace it to see the delays). */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * How a call may be repeated once an attempt may have reached the server and its answer
 * was lost (no answer, a cut connection, a stalled body, a gateway's 503/504):
 * - `repeat`: reads, and writes that set a state (repeating them lands in the same state);
 * - `delete`: repeated, and a `not_found` after such an attempt means that attempt deleted it;
 * - `once`: everything else: a registration, a sign-in, a flow submission, a link, an
 *   account change. Repeating it could mint a second session or spend a one-time code
 *   (a recovery code works once), so it is reported instead.
 */
export type Repeatability = 'repeat' | 'delete' | 'once';

/** POSTs that only read or end something: repeating them changes nothing more. */
const REPEATABLE_POSTS = [
  /\/v1\/sessions\/(verify|revoke)$/,
  /\/v1\/identities\/[^/]+\/revoke-sessions$/,
  /\/v1\/logout$/,
  /\/v1\/flows\/[^/]+\/passkey\/options$/,
];

export function repeatability(method: string, url: string): Repeatability {
  switch (method) {
    case 'GET':
    case 'HEAD':
    case 'PUT':
    case 'PATCH':
      return 'repeat';
    case 'DELETE':
      return 'delete';
    case 'POST': {
      const path = new URL(url).pathname;
      return REPEATABLE_POSTS.some((p) => p.test(path)) ? 'repeat' : 'once';
    }
    default:
      return 'once';
  }
}

/** Statuses whose error body may carry a retryable code. */
const RETRY_STATUSES = new Set([429, 503, 504]);
/** Statuses a Response may not be constructed with a body for. */
const NULL_BODY_STATUSES = new Set([101, 204, 205, 304]);

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A fetch with a deadline per attempt and bounded retries. `rate_limited` (Tessera refused
 * before acting) is retried for every call, after its `retry_after`. Everything where the
 * call may have been acted on without the client learning the outcome (no answer within the
 * deadline, a broken connection or body, `unavailable`/`timeout`, which a gateway also
 * answers after the server got the request) is retried only as `repeatability` allows;
 * otherwise it is reported (`timeout`/`unavailable`, status 0 when no complete answer came).
 *
 * Each attempt reads the whole body under its deadline, so a body that stalls is an attempt
 * that timed out, not a call that hangs after the transport returned.
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
    const repeat = repeatability(request.method, request.url);
    /** Whether an earlier attempt may have reached the server without its outcome arriving. */
    let mayHaveActed = false;
    for (let attempt = 0; ; attempt += 1) {
      const last = attempt >= retries;
      const deadline = AbortSignal.timeout(timeoutMs);
      const signal = AbortSignal.any([request.signal, deadline]);
      let response: Response;
      try {
        response = await readWhole(await fetchImpl(request.clone(), { signal }));
      } catch (error) {
        if (request.signal.aborted) throw error;
        const code = deadline.aborted ? 'timeout' : 'unavailable';
        if (last || repeat === 'once') {
          throw new TesseraError(code, 0, undefined, undefined, { cause: error });
        }
        mayHaveActed = true;
        await sleep(backoff(attempt));
        continue;
      }
      if (repeat === 'delete' && mayHaveActed && response.status === 404) {
        // The earlier attempt deleted it: what the caller asked for is done.
        if (errorFromAnswer(404, await bodyJson(response)).code === 'not_found') {
          return new Response(null, { status: 204 });
        }
      }
      if (last || !RETRY_STATUSES.has(response.status)) return response;
      const failure = errorFromAnswer(response.status, await bodyJson(response));
      let delay: number;
      if (failure.code === 'rate_limited') {
        const after = failure.retryAfter ?? 1;
        if (after > maxRetryAfterSeconds) return response;
        delay = after * 1000;
      } else if (
        (failure.code === 'unavailable' || failure.code === 'timeout') &&
        repeat !== 'once'
      ) {
        mayHaveActed = true;
        delay = backoff(attempt);
      } else {
        return response;
      }
      await sleep(delay);
    }
  };
}

/** The answer with its body read to the end (under the attempt's signal) and held in memory. */
async function readWhole(response: Response): Promise<Response> {
  const body = await response.arrayBuffer();
  return new Response(NULL_BODY_STATUSES.has(response.status) ? null : body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

function bodyJson(response: Response): Promise<unknown> {
  return response
    .clone()
    .json()
    .catch(() => null);
}
