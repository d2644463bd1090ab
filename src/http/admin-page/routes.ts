import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { operatorActor } from '../../domain/admin/operators.js';
import { buildOverview } from '../../domain/admin/overview.js';
import {
  EXPORT_LIMIT,
  PAGE_SIZE,
  parseIdentitySearch,
  parsePage,
} from '../../domain/admin/search.js';
import { DomainError, notFound, validationError } from '../../domain/errors.js';
import { setIdentityState } from '../../domain/identities/identity-service.js';
import { setIdentityEmail } from '../../domain/identities/identity-email.js';
import { toIdentity } from '../../domain/identities/identity.js';
import { resetPasskeys } from '../../domain/passkeys/passkey-service.js';
import { removeSecondFactor } from '../../domain/second-factor/enrolment.js';
import { revokeIdentitySessions } from '../../domain/sessions/session-service.js';
import type { Session } from '../../domain/sessions/session.js';
import { isUuid } from '../../lib/ids.js';
import { requireAccountSession } from '../account-session.js';
import type { AppDeps } from '../deps.js';
import { IdParams, responses, seeOther } from '../schemas.js';
import { AUDIT_FILTERS, type AuditFilterName, auditPage } from './audit-page.js';
import { auditCsv } from './csv.js';
import { adminCsrfToken, adminFormHooks, adminPageHooks } from './guard.js';
import { identitiesPage } from './identities-page.js';
import { IDENTITY_NOTICES, type IdentityNotice, identityPage } from './identity-page.js';
import { loadAudit, loadIdentity } from './load.js';
import { ADMIN_PATHS } from './render.js';
import { overviewPage } from './overview-page.js';
import { adminErrorHandler, sendAdminHtml, sentence } from './respond.js';
import { Html, REFUSALS, SIGNED_OUT } from './schemas.js';
import { serviceTokenRoutes } from './service-token-routes.js';
import { webhookRoutes } from './webhook-routes.js';
import { sendRecoveryMail } from '../../domain/recovery/request-recovery.js';
import { recoveryDeps } from '../routes/recovery.js';
import { oidcRoutes } from './oidc-routes.js';

/**
 * The console is a set of pages, not an API: left out of the OpenAPI document (`hide`),
 * its answers still declared like every route's.
 */
const pageSchema = (querystring?: ReturnType<typeof Type.Object>, params = false) => ({
  hide: true,
  ...(querystring ? { querystring } : {}),
  ...(params ? { params: IdParams } : {}),
  response: responses({ 200: Html('A console page'), 303: SIGNED_OUT }, REFUSALS, {
    html: true,
  }),
});

const IdentitiesQuery = Type.Object({
  q: Type.Optional(Type.String()),
  state: Type.Optional(Type.String()),
  page: Type.Optional(Type.String()),
});
const AuditQuery = Type.Object({
  ...Object.fromEntries(AUDIT_FILTERS.map(([name]) => [name, Type.Optional(Type.String())])),
  page: Type.Optional(Type.String()),
});
const DoneQuery = Type.Object({ done: Type.Optional(Type.String()) });

type AuditQueryInput = Partial<Record<AuditFilterName | 'page', string>>;
type IdRoute = { Params: Static<typeof IdParams> };

/**
 * The admin console (docs/admin.md): `GET /v1/admin` and its pages, and the identity
 * actions as form posts. Every route runs the preamble of guard.ts first; every action
 * calls the domain service the API and the CLI call, with the operator as the actor.
 */
export async function adminRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  await app.register(async (admin) => {
    admin.setErrorHandler(adminErrorHandler(deps));
    consolePages(admin, deps);
    identityActions(admin, deps);
    serviceTokenRoutes(admin, deps);
    webhookRoutes(admin, deps);
    oidcRoutes(admin, deps);
  });
}

/** The operator's session, which the route's preamble (guard.ts) has already checked. */
function operatorOf(deps: AppDeps, request: FastifyRequest): Promise<Session> {
  return requireAccountSession(deps, request);
}

/** A refusal of the filters shown above the (empty) list, so they can be fixed there. */
function filterError(error: unknown): string {
  if (error instanceof DomainError && error.code === 'validation_error') {
    return sentence(error);
  }
  if (error instanceof DomainError && error.code === 'not_found') {
    return 'No identity has that id or username.';
  }
  throw error;
}

function consolePages(app: FastifyInstance, deps: AppDeps): void {
  const hooks = adminPageHooks(deps);

  app.get(
    ADMIN_PATHS.home,
    { ...hooks, exposeHeadRoute: false, schema: pageSchema() },
    async (request, reply) => {
      const session = await operatorOf(deps, request);
      const overview = await buildOverview(deps.store, deps.clock.now());
      return sendAdminHtml(reply, 200, overviewPage(session.identity, overview));
    },
  );

  app.get<{ Querystring: Static<typeof IdentitiesQuery> }>(
    ADMIN_PATHS.identities,
    { ...hooks, exposeHeadRoute: false, schema: pageSchema(IdentitiesQuery) },
    async (request, reply) => {
      const session = await operatorOf(deps, request);
      const query = { q: request.query.q, state: request.query.state };
      let page = 1;
      try {
        page = parsePage(request.query.page);
        const search = parseIdentitySearch(request.query);
        const rows = await deps.store.searchIdentities(search);
        const html = identitiesPage({
          operator: session.identity,
          query,
          identities: rows.slice(0, PAGE_SIZE).map(toIdentity),
          page,
          hasNext: rows.length > PAGE_SIZE,
        });
        return sendAdminHtml(reply, 200, html);
      } catch (error) {
        const html = identitiesPage({
          operator: session.identity,
          query,
          identities: [],
          page,
          hasNext: false,
          error: filterError(error),
        });
        return sendAdminHtml(reply, 422, html);
      }
    },
  );

  app.get<IdRoute & { Querystring: Static<typeof DoneQuery> }>(
    `${ADMIN_PATHS.identities}/:id`,
    { ...hooks, exposeHeadRoute: false, schema: pageSchema(DoneQuery, true) },
    async (request, reply) => {
      const session = await operatorOf(deps, request);
      const done = request.query.done;
      const notice =
        done !== undefined && Object.hasOwn(IDENTITY_NOTICES, done)
          ? IDENTITY_NOTICES[done as IdentityNotice]
          : undefined;
      const html = identityPage({
        ...(await loadIdentity(deps, request.params.id)),
        operator: session.identity,
        csrfToken: adminCsrfToken(deps, session),
        notice,
      });
      return sendAdminHtml(reply, 200, html);
    },
  );

  app.get<{ Querystring: AuditQueryInput }>(
    ADMIN_PATHS.audit,
    { ...hooks, exposeHeadRoute: false, schema: pageSchema(AuditQuery) },
    async (request, reply) => {
      const session = await operatorOf(deps, request);
      const { page: rawPage, ...query } = request.query;
      let page = 1;
      try {
        page = parsePage(rawPage);
        const entries = await loadAudit(deps, request.query);
        const html = auditPage({
          operator: session.identity,
          query,
          entries: entries.slice(0, PAGE_SIZE),
          page,
          hasNext: entries.length > PAGE_SIZE,
        });
        return sendAdminHtml(reply, 200, html);
      } catch (error) {
        const html = auditPage({
          operator: session.identity,
          query,
          entries: [],
          page,
          hasNext: false,
          error: filterError(error),
        });
        return sendAdminHtml(reply, 422, html);
      }
    },
  );

  app.get<{ Querystring: AuditQueryInput }>(
    ADMIN_PATHS.auditCsv,
    {
      ...hooks,
      exposeHeadRoute: false,
      schema: {
        hide: true,
        querystring: AuditQuery,
        response: responses(
          {
            200: Type.Unsafe({
              description: 'The matching audit entries, newest first, as CSV',
              content: { 'text/csv': { schema: Type.String() } },
            }),
            303: SIGNED_OUT,
          },
          REFUSALS,
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const session = await operatorOf(deps, request);
      // Every match up to the limit, whatever page the link was on.
      const query: AuditQueryInput = { ...request.query, page: undefined };
      const entries = await loadAudit(deps, query, EXPORT_LIMIT);
      // Reading the log is not audited; carrying it away is.
      deps.audit.enqueue(operatorActor(session.identity, request.ip), {
        action: 'admin_audit_export',
        details: { rows: entries.length, filters: query },
      });
      const day = new Date(deps.clock.now()).toISOString().slice(0, 10);
      return reply
        .code(200)
        .header('content-disposition', `attachment; filename="tessera-audit-${day}.csv"`)
        .header('cache-control', 'no-store')
        .header('x-content-type-options', 'nosniff')
        .type('text/csv; charset=utf-8')
        .send(auditCsv(entries));
    },
  );
}

/** The identity page's forms: each a domain service call, then back to the page (303). */
function identityActions(app: FastifyInstance, deps: AppDeps): void {
  const schema = {
    hide: true,
    params: IdParams,
    response: responses(
      { 303: seeOther('Done, back to the identity page; or not signed in, to /v1/login') },
      REFUSALS,
      { html: true },
    ),
  };
  const action = (
    name: string,
    destructive: boolean,
    run: (
      actor: ReturnType<typeof operatorActor>,
      id: string,
      body: Record<string, unknown>,
    ) => Promise<IdentityNotice>,
  ) =>
    app.post<IdRoute>(
      `${ADMIN_PATHS.identities}/:id/${name}`,
      { ...adminFormHooks(deps, { destructive }), schema },
      async (request: FastifyRequest<IdRoute>, reply: FastifyReply) => {
        const session = await operatorOf(deps, request);
        const actor = operatorActor(session.identity, request.ip);
        const body = (request.body ?? {}) as Record<string, unknown>;
        // By id only: the services also take a username, which no page links to.
        if (!isUuid(request.params.id)) throw notFound();
        const done = await run(actor, request.params.id, body);
        return reply
          .header('cache-control', 'no-store')
          .redirect(`${ADMIN_PATHS.identity(request.params.id)}?done=${done}`, 303);
      },
    );

  action('disable', true, async (actor, id, body) => {
    await setIdentityState(deps, actor, id, 'disabled', {
      revokeSessions: body.end_sessions === 'true',
    });
    return 'disabled';
  });
  action('enable', false, async (actor, id) => {
    await setIdentityState(deps, actor, id, 'active');
    return 'enabled';
  });
  // What `PUT /v1/identities/{id}/email` does with `verified: true` for the address the page
  // showed: an operator who checked the address out of band vouches for it. Refused when the
  // address changed since, so an address the operator never saw is not the one verified.
  action('verify-email', true, async (actor, id, body) => {
    const current = await deps.store.findIdentityById(id);
    if (!current) throw notFound();
    if (current.email === null) throw validationError('the identity has no email address');
    if (body.email !== current.email) {
      throw validationError('the email address changed meanwhile: reload the page');
    }
    await setIdentityEmail(deps, actor, id, { email: current.email, verified: true });
    return 'email-verified';
  });
  action('end-sessions', true, async (actor, id) => {
    await revokeIdentitySessions(deps, actor, id);
    return 'sessions-ended';
  });
  action('reset-passkeys', true, async (actor, id) => {
    await resetPasskeys(deps, actor, id);
    return 'passkeys-reset';
  });
  action('reset-second-factor', true, async (actor, id) => {
    await removeSecondFactor(deps, actor, id, 'identity_second_factor_reset');
    return 'second-factor-reset';
  });
  // The recovery mail the user could ask for themselves (docs/recovery.md), to the
  // identity's verified address only; refused (422, said on the page) when it has none.
  app.post<IdRoute>(
    `${ADMIN_PATHS.identities}/:id/send-recovery`,
    { ...adminFormHooks(deps, { destructive: true }), schema },
    async (request, reply) => {
      const session = await operatorOf(deps, request);
      if (!isUuid(request.params.id)) throw notFound();
      const actor = operatorActor(session.identity, request.ip);
      await sendRecoveryMail(
        recoveryDeps(deps, request),
        actor,
        request.params.id,
        deps.config.flowTtlMs,
      );
      return reply
        .header('cache-control', 'no-store')
        .redirect(`${ADMIN_PATHS.identity(request.params.id)}?done=recovery-sent`, 303);
    },
  );
}
