import * as oidc from 'openid-client';
import { UpstreamFailure } from '../../domain/providers/upstream.js';

/** A network failure (refused, reset, timed out): the provider did not answer. */
function isUnreachable(error: unknown): boolean {
  if (error instanceof DOMException)
    return error.name === 'TimeoutError' || error.name === 'AbortError';
  return error instanceof TypeError && (error as { cause?: unknown }).cause !== undefined;
}

/**
 * An error of openid-client as the domain's `UpstreamFailure`: the provider's own error on
 * the callback is `denied`, no answer is `unreachable`, any failed check `invalid_response`.
 * The detail is the provider's error code or the library's message: no token, no secret.
 */
export function upstreamFailure(error: unknown): UpstreamFailure {
  if (error instanceof UpstreamFailure) return error;
  if (error instanceof oidc.AuthorizationResponseError) {
    return new UpstreamFailure('denied', error.error);
  }
  if (isUnreachable(error) || isUnreachable((error as { cause?: unknown } | null)?.cause)) {
    return new UpstreamFailure('unreachable', (error as Error).message);
  }
  if (error instanceof oidc.ResponseBodyError) {
    return new UpstreamFailure('invalid_response', error.error);
  }
  return new UpstreamFailure(
    'invalid_response',
    error instanceof Error ? error.message : String(error),
  );
}

/** openid-client's options for a provider: plain http only where the file allowed it. */
export function requestOptions(allowHttp: boolean): {
  execute: ((c: oidc.Configuration) => void)[];
  timeout: number;
} {
  return { execute: allowHttp ? [oidc.allowInsecureRequests] : [], timeout: 10 };
}

/**
 * The domain's clock as openid-client's: ID tokens' `exp` and `iat` are checked against the
 * time the request is handled at, as every other expiry in Tessera.
 */
export function skewSeconds(now: number): number {
  return Math.round((now - Date.now()) / 1000);
}
