import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { DomainError, validationError } from '../domain/errors.js';

// A Host header that is a plain hostname or bracketed IPv6 address with an optional port;
// anything else names no origin of ours.
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/**
 * The service's own origin(s). SERVICE_PUBLIC_URL when set. Otherwise the Host the browser
 * addressed, with either scheme: behind a TLS-terminating proxy the connection Tessera sees
 * is plain HTTP while the browser's origin is https, and a browser cannot be made to send
 * a Host other than the site it is on, so this never admits a foreign site.
 */
export function ownOrigins(request: FastifyRequest, config: Config): string[] {
  if (config.publicUrl) return [config.publicUrl];
  const host = request.host;
  if (!host || !HOST.test(host)) return [];
  return [originOf(`http://${host}`), originOf(`https://${host}`)].filter(
    (origin): origin is string => origin !== null,
  );
}

export function loginUiOrigin(config: Config): string | null {
  return config.loginUiUrl ? originOf(config.loginUiUrl) : null;
}

/** docs/browser-sign-in.md, CORS zones: who may read browser-endpoint responses cross-origin. */
export function corsZoneOrigins(config: Config): {
  session: string[];
  credentials: string[];
  account: string[];
} {
  const ui = loginUiOrigin(config);
  return {
    session: [...config.sessionCorsOrigins, ...(ui ? [ui] : [])],
    credentials: ui ? [ui] : [],
    // The operator's own UI may offer the account pages' actions (docs/account.md).
    account: ui ? [ui] : [],
  };
}

/** Where a `return_to` may point: the configured list, or the CORS origins plus our own. */
export function returnToAllowList(request: FastifyRequest, config: Config): string[] {
  const listed = config.returnToAllowed ?? [
    ...config.sessionCorsOrigins,
    ...ownOrigins(request, config),
  ];
  // The OpenID Connect login interaction returns to the provider's interaction pages.
  return config.oidcIssuer === null ? listed : [...listed, `${config.oidcIssuer}/interaction`];
}

/** Pages that may submit a password into a flow: the hosted page and the operator's UI. */
export function flowSubmitOrigins(request: FastifyRequest, config: Config): string[] {
  const ui = loginUiOrigin(config);
  return [...ownOrigins(request, config), ...(ui ? [ui] : [])];
}

/** Pages that may end a session: ours and every origin of the session CORS zone. */
export function logoutOrigins(request: FastifyRequest, config: Config): string[] {
  return [...ownOrigins(request, config), ...corsZoneOrigins(config).session];
}

/**
 * An onRequest hook refusing (403 `forbidden`) a request whose `Origin` is present and not
 * allowed. Browsers send `Origin` on every cross-origin POST, so a page elsewhere cannot
 * drive these endpoints; a request without one (curl, a backend) is not a browser attack.
 */
export function refuseForeignOrigin(allowed: (request: FastifyRequest) => string[]) {
  return async (request: FastifyRequest): Promise<void> => {
    const origin = request.headers.origin;
    if (origin === undefined) return;
    if (!allowed(request).includes(origin)) throw new DomainError('forbidden');
  };
}

/**
 * The links a mail carries (`<path>?<idName>=…&token=…`): to SERVICE_PUBLIC_URL, or without
 * one to the origin the request came to. Refused (422) only when a mail is about to be
 * written and the request names no host to link to.
 */
export function mailLinks(
  request: FastifyRequest,
  config: Config,
  path: string,
  idName: string,
): (id: string, token: string) => string {
  const base =
    ownOrigins(request, config).find((origin) => origin.startsWith(`${request.protocol}:`)) ??
    config.publicUrl;
  return (id, token) => {
    if (!base)
      throw validationError('the request names no host to link to: set SERVICE_PUBLIC_URL');
    const url = new URL(path, base);
    url.searchParams.set(idName, id);
    url.searchParams.set('token', token);
    return url.href;
  };
}
