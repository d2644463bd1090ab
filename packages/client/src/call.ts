import { TesseraError, errorFromAnswer } from './errors.js';

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * The data of a successful answer, or a TesseraError. Failures raised while the answer was
 * read (its deadline, a broken connection) become `timeout`/`unavailable`; an abort the
 * caller asked for is passed through as it is.
 */
export async function unwrap<T>(
  pending: Promise<FetchResult<T>>,
  signal?: AbortSignal,
): Promise<T> {
  let result: FetchResult<T>;
  try {
    result = await pending;
  } catch (error) {
    if (error instanceof TesseraError || signal?.aborted) throw error;
    const name = (error as { name?: unknown } | null)?.name;
    throw new TesseraError(
      name === 'TimeoutError' ? 'timeout' : 'unavailable',
      0,
      undefined,
      undefined,
      {
        cause: error,
      },
    );
  }
  if (!result.response.ok) throw errorFromAnswer(result.response.status, result.error);
  return result.data as T;
}

/** Joins a base URL and an absolute path, whatever trailing slash the base has. */
export function endpoint(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}
