import { TesseraError } from './errors.js';
import { TOKEN_PREFIX, checkToken } from './tokens.js';

/*
 * The client's options, checked when it is made (and `clientIp` per call): a bad one is a
 * TesseraError naming it, before anything is sent, never a TypeError from deep in fetch.
 */

/**
 * The service token, checked offline when the client is made: a mistyped one (a stray
 * newline from a file, a truncated paste) is refused as Tessera would refuse it, instead of
 * failing later as a header fetch cannot send.
 */
export function requireServiceToken(token: unknown, acceptLegacyTokens: boolean): string {
  const check = checkToken('service', token);
  if (check === 'ok' || (check === 'legacy' && acceptLegacyTokens)) return token as string;
  throw new TesseraError(
    'invalid_service_token',
    401,
    check === 'malformed'
      ? `serviceToken is not a Tessera service token (${TOKEN_PREFIX.service} and 43 base64url characters)`
      : 'serviceToken fails its checksum: mistyped, or minted before tokens carried one ' +
          '(then pass acceptLegacyTokens: true)',
  );
}

/** `baseUrl` must be an absolute http(s) URL; anything else could only fail per request. */
export function requireBaseUrl(baseUrl: unknown): void {
  let url: URL | undefined;
  try {
    url = typeof baseUrl === 'string' ? new URL(baseUrl) : undefined;
  } catch {
    url = undefined;
  }
  if (url?.protocol !== 'http:' && url?.protocol !== 'https:') {
    throw new TesseraError(
      'validation_error',
      0,
      'baseUrl must be an absolute http(s) URL, such as https://auth.example.com',
    );
  }
}

/** A value fetch can send as a header (no line breaks, no characters beyond Latin-1). */
export function headerValue(what: string, value: unknown, name = 'x-check'): string {
  try {
    if (typeof value !== 'string') throw new TypeError('not a string');
    new Headers([[name, value]]);
    return value;
  } catch {
    throw new TesseraError('validation_error', 0, `${what} is not a valid HTTP header`);
  }
}
