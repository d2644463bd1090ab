import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { operatorActor } from '../../domain/admin/operators.js';
import { DomainError, notFound } from '../../domain/errors.js';
import {
  createServiceToken,
  listServiceTokens,
  revokeServiceToken,
} from '../../domain/service-tokens/service-token-service.js';
import { isUuid } from '../../lib/ids.js';
import { requireAccountSession } from '../account-session.js';
import type { AppDeps } from '../deps.js';
import { IdParams, responses, seeOther } from '../schemas.js';
import { adminCsrfToken, adminFormHooks, adminPageHooks } from './guard.js';
import { ADMIN_PATHS } from './render.js';
import { sendAdminHtml, sentence } from './respond.js';
import { Html, REFUSALS, SIGNED_OUT } from './schemas.js';
import {
  type ServiceTokensPageInput,
  TOKEN_NOTICES,
  type TokenNotice,
  serviceTokensPage,
} from './service-tokens-page.js';

const CreateBody = Type.Object(
  {
    csrf_token: Type.Optional(Type.String()),
    name: Type.Optional(Type.String()),
    // One checkbox ticked sends a string, several an array.
    grants: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  },
  { additionalProperties: false },
);

/**
 * The console's service tokens (docs/admin.md): the list, a create form whose answer shows
 * the new token once (a page, not a redirect: the token must not sit in a URL or be
 * fetched again), and a revoke button per token. The same services as `tessera svc`.
 * Creating and revoking both need a recent sign-in: a token is a credential.
 */
export function serviceTokenRoutes(app: FastifyInstance, deps: AppDeps): void {
  const page = async (
    request: Parameters<typeof requireAccountSession>[1],
    extras: Partial<ServiceTokensPageInput> = {},
  ) => {
    const session = await requireAccountSession(deps, request);
    return serviceTokensPage({
      operator: session.identity,
      tokens: await listServiceTokens(deps.store),
      csrfToken: adminCsrfToken(deps, session),
      ...extras,
    });
  };

  app.get<{ Querystring: { done?: string } }>(
    ADMIN_PATHS.serviceTokens,
    {
      ...adminPageHooks(deps),
      exposeHeadRoute: false,
      schema: {
        hide: true,
        querystring: Type.Object({ done: Type.Optional(Type.String()) }),
        response: responses({ 200: Html('The service tokens'), 303: SIGNED_OUT }, REFUSALS, {
          html: true,
        }),
      },
    },
    async (request, reply) => {
      const done = request.query.done;
      const notice =
        done !== undefined && Object.hasOwn(TOKEN_NOTICES, done)
          ? TOKEN_NOTICES[done as TokenNotice]
          : undefined;
      return sendAdminHtml(reply, 200, await page(request, { notice }));
    },
  );

  app.post<{ Body: Static<typeof CreateBody> }>(
    ADMIN_PATHS.serviceTokens,
    {
      ...adminFormHooks(deps, { destructive: true }),
      schema: {
        hide: true,
        body: CreateBody,
        response: responses(
          { 200: Html('Created: the token, shown once'), 303: SIGNED_OUT },
          REFUSALS,
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const session = await requireAccountSession(deps, request);
      const name = request.body.name ?? '';
      const raw = request.body.grants ?? [];
      const grants = Array.isArray(raw) ? raw : [raw];
      try {
        const created = await createServiceToken(
          deps,
          operatorActor(session.identity, request.ip),
          { name, grants },
        );
        return sendAdminHtml(reply, 200, await page(request, { created }));
      } catch (error) {
        if (!(error instanceof DomainError) || error.code !== 'validation_error') throw error;
        request.errorCode = error.code;
        const message = sentence(error);
        const html = await page(request, { error: message, draft: { name, grants } });
        return sendAdminHtml(reply, 422, html);
      }
    },
  );

  app.post<{ Params: Static<typeof IdParams> }>(
    `${ADMIN_PATHS.serviceTokens}/:id/revoke`,
    {
      ...adminFormHooks(deps, { destructive: true }),
      schema: {
        hide: true,
        params: IdParams,
        response: responses(
          { 303: seeOther('Revoked, back to the list; or not signed in, to /v1/login') },
          REFUSALS,
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const session = await requireAccountSession(deps, request);
      // By id only: the service also takes a name, which no page links to.
      if (!isUuid(request.params.id)) throw notFound();
      await revokeServiceToken(
        deps,
        operatorActor(session.identity, request.ip),
        request.params.id,
      );
      return reply
        .header('cache-control', 'no-store')
        .redirect(`${ADMIN_PATHS.serviceTokens}?done=revoked`, 303);
    },
  );
}
