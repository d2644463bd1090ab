import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { operatorActor } from '../../domain/admin/operators.js';
import { DomainError } from '../../domain/errors.js';
import {
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  resendDelivery,
} from '../../domain/webhooks/webhook-service.js';
import { requireAccountSession } from '../account-session.js';
import type { AppDeps } from '../deps.js';
import { IdParams, responses, seeOther } from '../schemas.js';
import { adminCsrfToken, adminFormHooks, adminPageHooks } from './guard.js';
import { ADMIN_PATHS } from './render.js';
import { sendAdminHtml, sentence } from './respond.js';
import { Html, REFUSALS, SIGNED_OUT } from './schemas.js';
import {
  WEBHOOK_NOTICES,
  type WebhookNotice,
  type WebhooksPageInput,
  webhooksPage,
} from './webhooks-page.js';

const CreateBody = Type.Object(
  {
    csrf_token: Type.Optional(Type.String()),
    url: Type.Optional(Type.String()),
    // One checkbox ticked sends a string, several an array.
    events: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  },
  { additionalProperties: false },
);

/** The delivery log shows this many, newest first; `tessera webhook deliveries` shows more. */
const LOG_ROWS = 100;

const backTo = (done: WebhookNotice) => `${ADMIN_PATHS.webhooks}?done=${done}`;

/**
 * The console's webhooks (docs/admin.md): the list, a create form whose answer shows the
 * signing secret once, a delete button per webhook, and the delivery log with "send again"
 * for a delivery not sent. The same services as `tessera webhook`. Creating and deleting
 * need a recent sign-in (a secret is made, deliveries are dropped); sending again does not.
 */
export function webhookRoutes(app: FastifyInstance, deps: AppDeps): void {
  const page = async (
    request: Parameters<typeof requireAccountSession>[1],
    extras: Partial<WebhooksPageInput> = {},
  ) => {
    const session = await requireAccountSession(deps, request);
    return webhooksPage({
      operator: session.identity,
      webhooks: await listWebhooks(deps.store),
      deliveries: await listDeliveries(deps.store, { limit: LOG_ROWS }),
      csrfToken: adminCsrfToken(deps, session),
      ...extras,
    });
  };
  const done303 = {
    303: seeOther('Done, back to the webhooks; or not signed in, to /v1/login'),
  };

  app.get<{ Querystring: { done?: string } }>(
    ADMIN_PATHS.webhooks,
    {
      ...adminPageHooks(deps),
      exposeHeadRoute: false,
      schema: {
        hide: true,
        querystring: Type.Object({ done: Type.Optional(Type.String()) }),
        response: responses({ 200: Html('The webhooks'), 303: SIGNED_OUT }, REFUSALS, {
          html: true,
        }),
      },
    },
    async (request, reply) => {
      const done = request.query.done;
      const notice =
        done !== undefined && Object.hasOwn(WEBHOOK_NOTICES, done)
          ? WEBHOOK_NOTICES[done as WebhookNotice]
          : undefined;
      return sendAdminHtml(reply, 200, await page(request, { notice }));
    },
  );

  app.post<{ Body: Static<typeof CreateBody> }>(
    ADMIN_PATHS.webhooks,
    {
      ...adminFormHooks(deps, { destructive: true }),
      schema: {
        hide: true,
        body: CreateBody,
        response: responses(
          { 200: Html('Created: the secret, shown once'), 303: SIGNED_OUT },
          REFUSALS,
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const session = await requireAccountSession(deps, request);
      const url = request.body.url ?? '';
      const raw = request.body.events ?? [];
      const events = Array.isArray(raw) ? raw : [raw];
      try {
        const actor = operatorActor(session.identity, request.ip);
        const created = await createWebhook(deps, actor, { url, events });
        return sendAdminHtml(reply, 200, await page(request, { created }));
      } catch (error) {
        if (!(error instanceof DomainError) || error.code !== 'validation_error') throw error;
        request.errorCode = error.code;
        const html = await page(request, { error: sentence(error), draft: { url, events } });
        return sendAdminHtml(reply, 422, html);
      }
    },
  );

  app.post<{ Params: Static<typeof IdParams> }>(
    `${ADMIN_PATHS.webhooks}/:id/delete`,
    {
      ...adminFormHooks(deps, { destructive: true }),
      schema: {
        hide: true,
        params: IdParams,
        response: responses(done303, REFUSALS, { html: true }),
      },
    },
    async (request, reply) => {
      const session = await requireAccountSession(deps, request);
      await deleteWebhook(deps, operatorActor(session.identity, request.ip), request.params.id);
      return reply.header('cache-control', 'no-store').redirect(backTo('deleted'), 303);
    },
  );

  app.post<{ Params: Static<typeof IdParams> }>(
    `${ADMIN_PATHS.webhooks}/deliveries/:id/resend`,
    {
      ...adminFormHooks(deps, { destructive: false }),
      schema: {
        hide: true,
        params: IdParams,
        response: responses(done303, REFUSALS, { html: true }),
      },
    },
    async (request, reply) => {
      const session = await requireAccountSession(deps, request);
      await resendDelivery(deps, operatorActor(session.identity, request.ip), request.params.id);
      return reply.header('cache-control', 'no-store').redirect(backTo('resent'), 303);
    },
  );
}
