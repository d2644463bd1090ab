import {
  createSessionGuard,
  type SessionGuardOptions,
  type TesseraRequestSession,
} from './session-guard.js';

export type { SessionGuardOptions as TesseraNextOptions, TesseraRequestSession };

/** A Next.js App Router route handler: a Web `Request` in, a `Response` out. */
export type RouteHandler<Context> = (
  request: Request,
  context: Context,
) => Response | Promise<Response>;

/**
 * Wraps a Next.js route handler: the session cookie is checked first, and the handler is
 * called with the session (`undefined` only when `required: false` and there is none).
 * Without a valid session it answers 401 (403 for a disabled identity), or redirects a
 * browser to the hosted login page with `loginRedirect`. Needs no Next.js import: it works
 * with any framework that speaks Web `Request`/`Response`.
 */
export function withTesseraSession<Context = unknown>(
  options: SessionGuardOptions,
  handler: (
    request: Request,
    context: Context,
    session: TesseraRequestSession | undefined,
  ) => Response | Promise<Response>,
): RouteHandler<Context> {
  const guard = createSessionGuard(options);
  return async (request, context) => {
    const url = new URL(request.url);
    const decision = await guard.decide({
      method: request.method,
      url: url.pathname + url.search,
      cookie: request.headers.get('cookie') ?? undefined,
      accept: request.headers.get('accept') ?? undefined,
      host: url.host,
      protocol: url.protocol.slice(0, -1),
    });
    if (decision.action === 'continue') return handler(request, context, decision.session);
    if (decision.action === 'redirect') {
      return new Response(null, { status: 303, headers: { location: decision.location } });
    }
    return Response.json(decision.body, { status: decision.status });
  };
}
