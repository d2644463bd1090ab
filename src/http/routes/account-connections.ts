import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { type Actor } from '../../domain/audit/audit-log.js';
import { DomainError } from '../../domain/errors.js';
import type { TakenAuthorization } from '../../domain/providers/authorize.js';
import {
  type ConnectionDeps,
  disconnect,
  finishConnection,
  listConnections,
  startConnection,
} from '../../domain/providers/connections.js';
import { verifySession } from '../../domain/sessions/session-service.js';
import type { Session } from '../../domain/sessions/session.js';
import {
  ACCOUNT_CSRF_HEADER,
  accountActor,
  accountChangeHooks,
  accountCsrfToken,
  requireAccountSession,
} from '../account-session.js';
import { CONNECTIONS_PATH, connectionsPage } from '../account-page/connections-page.js';
import { sessionCookie } from '../cookies.js';
import type { AppDeps } from '../deps.js';
import { ERROR_STATUS, handleError, refusalOf } from '../errors.js';
import { messagePage } from '../login-page/render.js';
import { isFormPost, prefersHtml, sendPage } from '../login-page/respond.js';
import { providerFailure, sendToProvider, serviceOrigin } from '../provider-pages/respond.js';
import { NoContent, jsonOrPage, responses, seeOther } from '../schemas.js';

const COOKIE = [{ sessionCookie: [] }];
const ERRORS = [401, 403, 404, 422, 503, 504];
const ProviderParams = Type.Object({ provider: Type.String({ maxLength: 64 }) });
const CsrfField = {
  csrf_token: Type.Optional(
    Type.String({ description: 'The account CSRF token (or the X-CSRF-Token header)' }),
  ),
};
const ConnectBody = Type.Object(CsrfField, { additionalProperties: false });
const DisconnectBody = Type.Object(
  { subject: Type.String({ description: "The account's subject at the provider" }), ...CsrfField },
  { additionalProperties: false },
);
const ConnectionSchema = Type.Object({
  provider: Type.String(),
  label: Type.String(),
  accounts: Type.Array(Type.Object({ subject: Type.String(), linked_at: Type.String() })),
});

export function connectionDeps(deps: AppDeps): ConnectionDeps {
  return {
    ...deps,
    flowTtlMs: deps.config.flowTtlMs,
    signInEmailCode: deps.config.signInEmailCode,
  };
}

/**
 * "Connected accounts" (docs/providers.md): the signed-in user's links to the configured
 * providers, connecting one (a trip to the provider, back through its callback) and
 * disconnecting one. Both are credential changes: the account CSRF token, a recent sign-in
 * and the identity's strongest factor (credential-change.ts).
 */
export function accountConnectionRoutes(app: FastifyInstance, deps: AppDeps): void {
  const change = accountChangeHooks(deps, { credential: true });

  async function showPage(
    request: FastifyRequest,
    reply: FastifyReply,
    session: Session,
    status = 200,
    extra: { notice?: string; error?: string } = {},
  ) {
    const page = connectionsPage({
      session,
      connections: await listConnections(deps, session.identity.id),
      csrfToken: accountCsrfToken(deps, session),
      ...extra,
    });
    return sendPage(reply.header('cache-control', 'no-store'), status, page);
  }

  /** A form post's failure: the page with the sentence; JSON clients get the error model. */
  async function formFailure(error: unknown, request: FastifyRequest, reply: FastifyReply) {
    if (!isFormPost(request)) return handleError(error, request, reply);
    const refused = refusalOf(error);
    const session = await requireAccountSession(deps, request).catch(() => null);
    if (!refused || !session) return handleError(error, request, reply);
    request.errorCode = refused.code;
    const message = refused.hasClientMessage ? refused.message : 'That did not work. Try again.';
    return showPage(request, reply, session, ERROR_STATUS[refused.code], { error: message });
  }

  app.get(
    CONNECTIONS_PATH,
    {
      schema: {
        operationId: 'listOwnConnections',
        summary: "The signed-in user's connected accounts (or the page)",
        tags: ['account'],
        description:
          'JSON: each configured provider with the accounts of it this identity holds (verified links), and the account CSRF token in the X-CSRF-Token header. A browser asking for HTML gets the hosted page; without a session, a 303 to the hosted login.',
        security: COOKIE,
        response: responses(
          {
            200: jsonOrPage(Type.Array(ConnectionSchema), 'The connections (JSON), or the page'),
            303: seeOther('No session (browser): to the hosted login, returning here'),
          },
          [401, 403, 503, 504],
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const html = prefersHtml(request);
      let session: Session;
      try {
        session = await requireAccountSession(deps, request);
      } catch (error) {
        const code = refusalOf(error)?.code;
        if (html && (code === 'invalid_token' || code === 'session_expired')) {
          const back = `${serviceOrigin(request, deps)}${CONNECTIONS_PATH}`;
          return reply.redirect(`/v1/login?return_to=${encodeURIComponent(back)}`, 303);
        }
        throw error;
      }
      if (html) return showPage(request, reply, session);
      return reply
        .header('cache-control', 'no-store')
        .header(ACCOUNT_CSRF_HEADER, accountCsrfToken(deps, session))
        .send(await listConnections(deps, session.identity.id));
    },
  );

  app.post<{ Params: Static<typeof ProviderParams>; Body: Static<typeof ConnectBody> | undefined }>(
    `${CONNECTIONS_PATH}/:provider/connect`,
    {
      ...change,
      errorHandler: formFailure,
      schema: {
        operationId: 'connectProvider',
        summary: 'Connect an account at a provider',
        tags: ['account'],
        description:
          "Starts the provider's sign-in to connect its account to the signed-in identity: JSON answers { redirect_to }, a form post a page that goes there. The provider's callback adds the verified link (409-free: an account another identity holds is refused there). A credential change: CSRF token, recent sign-in, strongest factor.",
        security: COOKIE,
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        params: ProviderParams,
        body: ConnectBody,
        response: responses(
          {
            200: Type.Unsafe({
              description: "JSON: the provider's URL; a form post: a page that goes there",
              content: {
                'application/json': { schema: Type.Object({ redirect_to: Type.String() }) },
                'text/html': { schema: Type.String() },
              },
            }),
          },
          ERRORS,
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const session = await requireAccountSession(deps, request);
      const provider = deps.providers.get(request.params.provider);
      if (!provider) throw new DomainError('not_found');
      return sendToProvider(deps, request, reply, provider, (browser, origin) =>
        startConnection(connectionDeps(deps), {
          identityId: session.identity.id,
          providerId: provider.id,
          browser,
          origin,
        }),
      );
    },
  );

  app.post<{ Params: Static<typeof ProviderParams>; Body: Static<typeof DisconnectBody> }>(
    `${CONNECTIONS_PATH}/:provider/disconnect`,
    {
      ...change,
      errorHandler: formFailure,
      schema: {
        operationId: 'disconnectProvider',
        summary: 'Disconnect an account at a provider',
        tags: ['account'],
        description:
          "Removes the identity's link to that account, audited (provider_disconnect). Refused (422) when it is the identity's last way to sign in. A credential change: CSRF token, recent sign-in, strongest factor.",
        security: COOKIE,
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        params: ProviderParams,
        body: DisconnectBody,
        response: responses(
          {
            204: NoContent('Disconnected'),
            303: seeOther('Disconnected (form post): back to the page'),
          },
          ERRORS,
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const session = await requireAccountSession(deps, request);
      await disconnect(connectionDeps(deps), accountActor(request), session.identity.id, {
        providerId: request.params.provider,
        subject: request.body.subject,
      });
      if (isFormPost(request)) return reply.redirect(CONNECTIONS_PATH, 303);
      return reply.code(204).send();
    },
  );
}

/**
 * The provider's callback for a connection (routes/providers.ts dispatches here): the
 * browser's session must still be the identity's. Back to the page on success; a page with
 * the reason otherwise.
 */
export async function answerConnectionCallback(
  deps: AppDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  taken: TakenAuthorization,
  params: Readonly<Record<string, string>>,
  actor: Actor = accountActor(request),
): Promise<FastifyReply> {
  const signedInAs = await verifySession(deps, sessionCookie(request)).then(
    (session) => session.identity.id,
    () => null,
  );
  try {
    await finishConnection(connectionDeps(deps), actor, taken, { params, signedInAs });
    deps.providerSignIns.record(taken.provider.id, 'connected');
    return reply.header('cache-control', 'no-store').redirect(CONNECTIONS_PATH, 303);
  } catch (error) {
    const refused = providerFailure(error, taken.provider.label);
    if (!refused) throw error;
    request.errorCode = refused.code;
    deps.providerSignIns.record(taken.provider.id, refused.code);
    // A refused connection is a credential change that did not happen: audited like one.
    deps.audit.enqueue(actor, {
      action: 'provider_connect',
      target_identity: taken.record.identity_id,
      outcome: refused.code,
      details: { provider: taken.provider.id },
    });
    const page = messagePage({
      title: `Connect ${taken.provider.label}`,
      message: refused.message,
      restartUrl: CONNECTIONS_PATH,
    });
    return sendPage(reply, refused.status, page);
  }
}
