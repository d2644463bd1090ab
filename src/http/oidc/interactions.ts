import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import { DomainError } from '../../domain/errors.js';
import { acrOf, amrOf } from '../../domain/oidc/assurance.js';
import { OIDC_TTL_SECONDS } from '../../domain/oidc/lifetimes.js';
import type { Session } from '../../domain/sessions/session.js';
import { sessionCookie } from '../cookies.js';
import type { AppDeps } from '../deps.js';
import { ERROR_STATUS, refusalOf } from '../errors.js';
import { ownOrigins, refuseForeignOrigin } from '../origins.js';
import { responses, seeOther } from '../schemas.js';
import type { OidcHost } from './host.js';
import { FIRST_PARTY } from './model-adapter.js';
import { consentPage, continuePage, pageHeaders, problemPage } from './pages.js';
import { browserSession } from './provider.js';

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

const UidParams = Type.Object({ uid: Type.String({ maxLength: 64 }) });
const ConsentBody = Type.Object(
  {
    csrf_token: Type.Optional(Type.String()),
    decision: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
);
const HTML = { content: { 'text/html': { schema: Type.String() } } };
const page = (description: string) => Type.Unsafe({ description, ...HTML });

/** Reasons that a session made before this request does not satisfy (prompt=login, max_age...). */
const ANY_SESSION = new Set(['no_session', 'tessera_session']);

function sendHtml(reply: FastifyReply, status: number, html: string, formTargets: string[] = []) {
  return reply.code(status).headers(pageHeaders(formTargets)).send(html);
}

function failurePage(error: unknown, request: FastifyRequest, reply: FastifyReply) {
  const domain = refusalOf(error);
  if (!domain) {
    request.log.error({ err: error }, 'unhandled error');
    request.errorCode = 'internal_error';
    return sendHtml(reply, 500, problemPage('Something went wrong', 'Try again later.'));
  }
  request.errorCode = domain.code;
  const message =
    domain.code === 'not_found'
      ? 'This sign-in request has expired or was already completed.'
      : domain.code === 'forbidden'
        ? 'This page is out of date or was sent from another site, so it was refused.'
        : domain.code === 'unavailable' || domain.code === 'timeout'
          ? 'Sign-in is temporarily unavailable. Try again in a moment.'
          : 'The request could not be read.';
  return sendHtml(
    reply,
    ERROR_STATUS[domain.code],
    problemPage('Sign-in could not continue', message),
  );
}

/**
 * The provider's interactions, done by Tessera's own pages (docs/oidc.md, "Sign-in"):
 * login is the hosted login flow (a browser with a valid Tessera session is not asked
 * again), consent is asked of third-party clients only.
 */
export function interactionRoutes(app: FastifyInstance, deps: AppDeps, host: OidcHost): void {
  const base = `${host.prefix}/interaction`;
  const consentCsrf = (uid: string, session: Session) =>
    deps.secretBox.mac('oidc-consent', `${uid}.${session.id}`);

  async function load(
    request: FastifyRequest<{ Params: Static<typeof UidParams> }>,
    reply: FastifyReply,
  ) {
    const provider = await host.provider();
    let details: Interaction;
    try {
      details = await provider.interactionDetails(request.raw, reply.raw);
    } catch {
      throw new DomainError('not_found');
    }
    if (details.uid !== request.params.uid) throw new DomainError('not_found');
    const client = await provider.Client.find(String(details.params.client_id));
    if (!client) throw new DomainError('not_found');
    return { provider, details, client };
  }

  /** Finishes the interaction and sends the browser on to the provider. */
  async function finish(
    request: FastifyRequest,
    reply: FastifyReply,
    provider: Provider,
    result: Parameters<Provider['interactionResult']>[2],
    clientName: string,
  ) {
    const target = await provider.interactionResult(request.raw, reply.raw, result, {
      mergeWithLastSubmission: !('login' in result),
    });
    return sendHtml(reply, 200, continuePage(target, clientName));
  }

  app.get<{ Params: Static<typeof UidParams> }>(
    `${base}/:uid`,
    {
      exposeHeadRoute: false,
      errorHandler: failurePage,
      schema: {
        hide: true,
        operationId: 'oidcInteraction',
        summary: 'OpenID Connect sign-in and consent step',
        tags: ['oidc'],
        params: UidParams,
        response: responses(
          {
            200: page('The consent page, or the hop back to the provider'),
            303: seeOther('To the hosted login page, which returns here'),
          },
          [404, 422, 503, 504],
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const { provider, details, client } = await load(request, reply);
      const session = await browserSession(deps, sessionCookie(request));
      const clientName = client.clientName ?? client.clientId;
      const uid = details.uid;

      if (details.prompt.name === 'login') {
        const needsFresh = details.prompt.reasons.some((reason) => !ANY_SESSION.has(reason));
        // When the application asked for a new sign-in (prompt=login, max_age, acr_values),
        // only a session made after this request began will do.
        const startedAt = (details.iat ?? details.exp - OIDC_TTL_SECONDS.Interaction) * 1000;
        const fresh =
          session !== null && (!needsFresh || Date.parse(session.issued_at) >= startedAt);
        if (!fresh) {
          const returnTo = `${host.issuer.origin}${base}/${uid}`;
          return reply
            .header('cache-control', 'no-store')
            .redirect(`/v1/login?return_to=${encodeURIComponent(returnTo)}`, 303);
        }
        deps.audit.enqueue(
          { service_name: 'oidc', service_id: null },
          {
            action: 'oidc_login',
            target_identity: session.identity.id,
            details: {
              client_id: client.clientId,
              session_id: session.id,
              reasons: details.prompt.reasons,
            },
          },
        );
        const assurance = session as Session & { aal?: string };
        return finish(
          request,
          reply,
          provider,
          {
            login: {
              accountId: session.identity.id,
              acr: acrOf(assurance),
              amr: amrOf(assurance),
              ts: Math.floor(Date.parse(session.issued_at) / 1000),
              remember: true,
            },
          },
          clientName,
        );
      }

      if (details.prompt.name !== 'consent') throw new DomainError('not_found');
      // The consent belongs to the person the provider signed in; anyone else (the browser
      // signed out or switched user meanwhile) ends the request instead.
      if (session === null || session.identity.id !== details.session?.accountId) {
        return finish(
          request,
          reply,
          provider,
          {
            error: 'login_required',
            error_description: 'the Tessera session of this browser ended or changed',
          },
          clientName,
        );
      }
      const missing = details.prompt.details as { missingOIDCScope?: string[] };
      const scopes = missing.missingOIDCScope ?? [];
      if ((client as unknown as Record<string, unknown>)[FIRST_PARTY]) {
        return finish(
          request,
          reply,
          provider,
          { consent: { grantId: await grantFor(provider, details, scopes) } },
          clientName,
        );
      }
      const redirectUri = String(details.params.redirect_uri ?? client.redirectUris?.[0] ?? '');
      return sendHtml(
        reply,
        200,
        consentPage({
          clientName,
          redirectHost: URL.canParse(redirectUri) ? new URL(redirectUri).host : '',
          scopes,
          username: session.identity.username,
          action: `${base}/${uid}/consent`,
          csrfToken: consentCsrf(uid, session),
        }),
        (client.redirectUris ?? []).map((uri) => new URL(uri).origin),
      );
    },
  );

  app.post<{ Params: Static<typeof UidParams>; Body: Static<typeof ConsentBody> }>(
    `${base}/:uid/consent`,
    {
      errorHandler: failurePage,
      onRequest: refuseForeignOrigin((request) => ownOrigins(request, deps.config)),
      schema: {
        hide: true,
        operationId: 'oidcConsent',
        summary: 'Allow or deny a third-party application',
        tags: ['oidc'],
        consumes: ['application/x-www-form-urlencoded'],
        params: UidParams,
        body: ConsentBody,
        response: responses(
          { 200: page('The hop back to the provider, which redirects to the application') },
          [403, 404, 422, 503, 504],
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const { provider, details, client } = await load(request, reply);
      const session = await browserSession(deps, sessionCookie(request));
      const csrf = request.body?.csrf_token;
      if (
        details.prompt.name !== 'consent' ||
        session === null ||
        session.identity.id !== details.session?.accountId ||
        typeof csrf !== 'string' ||
        !deps.secretBox.verifyMac('oidc-consent', `${details.uid}.${session.id}`, csrf)
      ) {
        throw new DomainError('forbidden');
      }
      const decision = request.body?.decision;
      if (decision !== 'allow' && decision !== 'deny') {
        throw new DomainError('validation_error', 'decision must be allow or deny');
      }
      const missing = details.prompt.details as { missingOIDCScope?: string[] };
      const scopes = missing.missingOIDCScope ?? [];
      const actor = { service_name: 'oidc', service_id: null };
      const clientName = client.clientName ?? client.clientId;
      if (decision === 'deny') {
        deps.audit.enqueue(actor, {
          action: 'oidc_consent',
          outcome: 'denied',
          target_identity: session.identity.id,
          details: { client_id: client.clientId, scopes },
        });
        return finish(
          request,
          reply,
          provider,
          {
            error: 'access_denied',
            error_description: 'the user denied the request',
          },
          clientName,
        );
      }
      const grantId = await grantFor(provider, details, scopes);
      deps.audit.enqueue(actor, {
        action: 'oidc_consent',
        target_identity: session.identity.id,
        details: { client_id: client.clientId, scopes, grant_id: grantId },
      });
      return finish(request, reply, provider, { consent: { grantId } }, clientName);
    },
  );
}

/** The interaction's grant, extended by the scopes it still lacks. */
async function grantFor(
  provider: Provider,
  details: Interaction,
  scopes: string[],
): Promise<string> {
  const accountId = details.session!.accountId;
  const clientId = String(details.params.client_id);
  const grant =
    (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ??
    new provider.Grant({ accountId, clientId });
  if (scopes.length > 0) grant.addOIDCScope(scopes.join(' '));
  const claims = (details.prompt.details as { missingOIDCClaims?: string[] }).missingOIDCClaims;
  if (claims && claims.length > 0) grant.addOIDCClaims(claims);
  return grant.save();
}
