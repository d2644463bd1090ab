import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { operatorActor } from '../../domain/admin/operators.js';
import { DomainError, notFound } from '../../domain/errors.js';
import {
  createOidcClient,
  listOidcClients,
  revokeOidcClient,
} from '../../domain/oidc/client-service.js';
import { SIGNING_KEY_RETENTION_MS } from '../../domain/oidc/lifetimes.js';
import { listSigningKeys, rotateSigningKey } from '../../domain/oidc/signing-keys.js';
import { isUuid } from '../../lib/ids.js';
import { requireAccountSession } from '../account-session.js';
import type { AppDeps } from '../deps.js';
import { IdParams, responses, seeOther } from '../schemas.js';
import { adminCsrfToken, adminFormHooks, adminPageHooks } from './guard.js';
import {
  OIDC_NOTICES,
  type OidcClientDraft,
  type OidcNotice,
  type OidcPageInput,
  oidcPage,
} from './oidc-page.js';
import { ADMIN_PATHS } from './render.js';
import { sendAdminHtml, sentence } from './respond.js';
import { Html, REFUSALS, SIGNED_OUT } from './schemas.js';

const BACK = seeOther('Done, back to the page; or not signed in, to /v1/login');

const CreateBody = Type.Object(
  {
    csrf_token: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    redirect_uris: Type.Optional(Type.String()),
    post_logout_redirect_uris: Type.Optional(Type.String()),
    public: Type.Optional(Type.Literal('true')),
    first_party: Type.Optional(Type.Literal('true')),
  },
  { additionalProperties: false },
);

/** A textarea's lines, blank ones dropped. */
function lines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter(Boolean);
}

/**
 * The console's OpenID Connect page (docs/admin.md): clients (register, with the secret
 * shown once; revoke) and signing keys (rotate), through the services of `tessera oidc`.
 * Each change needs a recent sign-in.
 */
export function oidcRoutes(app: FastifyInstance, deps: AppDeps): void {
  const page = async (request: FastifyRequest, extras: Partial<OidcPageInput> = {}) => {
    const session = await requireAccountSession(deps, request);
    const [clients, keys] = await Promise.all([
      listOidcClients(deps.store),
      listSigningKeys(deps, SIGNING_KEY_RETENTION_MS),
    ]);
    return oidcPage({
      operator: session.identity,
      providerOn: deps.config.oidcIssuer !== null,
      clients,
      keys,
      csrfToken: adminCsrfToken(deps, session),
      ...extras,
    });
  };
  const actor = async (request: FastifyRequest) =>
    operatorActor((await requireAccountSession(deps, request)).identity, request.ip);
  const back = (done: OidcNotice) => `${ADMIN_PATHS.oidc}?done=${done}`;

  app.get<{ Querystring: { done?: string } }>(
    ADMIN_PATHS.oidc,
    {
      ...adminPageHooks(deps),
      exposeHeadRoute: false,
      schema: {
        hide: true,
        querystring: Type.Object({ done: Type.Optional(Type.String()) }),
        response: responses({ 200: Html('Clients and keys'), 303: SIGNED_OUT }, REFUSALS, {
          html: true,
        }),
      },
    },
    async (request, reply) => {
      const done = request.query.done;
      const notice =
        done !== undefined && Object.hasOwn(OIDC_NOTICES, done)
          ? OIDC_NOTICES[done as OidcNotice]
          : undefined;
      return sendAdminHtml(reply, 200, await page(request, { notice }));
    },
  );

  app.post<{ Body: Static<typeof CreateBody> }>(
    ADMIN_PATHS.oidcClients,
    {
      ...adminFormHooks(deps, { destructive: true }),
      schema: {
        hide: true,
        body: CreateBody,
        response: responses(
          { 200: Html('Registered: the client and its secret, shown once'), 303: SIGNED_OUT },
          REFUSALS,
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const body = request.body;
      const draft: OidcClientDraft = {
        name: body.name ?? '',
        redirect_uris: body.redirect_uris ?? '',
        post_logout_redirect_uris: body.post_logout_redirect_uris ?? '',
        public: body.public === 'true',
        first_party: body.first_party === 'true',
      };
      try {
        const created = await createOidcClient(deps, await actor(request), {
          name: draft.name,
          redirectUris: lines(draft.redirect_uris),
          postLogoutRedirectUris: lines(draft.post_logout_redirect_uris),
          public: draft.public,
          firstParty: draft.first_party,
        });
        return sendAdminHtml(reply, 200, await page(request, { created }));
      } catch (error) {
        if (!(error instanceof DomainError) || error.code !== 'validation_error') throw error;
        request.errorCode = error.code;
        const message = sentence(error);
        return sendAdminHtml(reply, 422, await page(request, { error: message, draft }));
      }
    },
  );

  app.post<{ Params: Static<typeof IdParams> }>(
    `${ADMIN_PATHS.oidcClients}/:id/revoke`,
    {
      ...adminFormHooks(deps, { destructive: true }),
      schema: {
        hide: true,
        params: IdParams,
        response: responses({ 303: BACK }, REFUSALS, { html: true }),
      },
    },
    async (request, reply) => {
      if (!isUuid(request.params.id)) throw notFound();
      await revokeOidcClient(deps, await actor(request), request.params.id);
      return reply.header('cache-control', 'no-store').redirect(back('revoked'), 303);
    },
  );

  app.post(
    ADMIN_PATHS.rotateOidcKey,
    {
      ...adminFormHooks(deps, { destructive: true }),
      schema: { hide: true, response: responses({ 303: BACK }, REFUSALS, { html: true }) },
    },
    async (request, reply) => {
      await rotateSigningKey(
        deps,
        await actor(request),
        deps.generateSigningKey,
        SIGNING_KEY_RETENTION_MS,
      );
      return reply.header('cache-control', 'no-store').redirect(back('rotated'), 303);
    },
  );
}
