import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { FlowRecord } from '../../domain/login-flows/flow.js';
import {
  BROWSER_ACTOR,
  recordSignIn,
  signInAttempt,
} from '../../domain/login-flows/sign-in-audit.js';
import {
  type TakenAuthorization,
  callbackPath,
  takeAuthorization,
} from '../../domain/providers/authorize.js';
import {
  finishProviderSignIn,
  startProviderSignIn,
  startProviderSignUp,
} from '../../domain/providers/provider-sign-in.js';
import type { UpstreamProvider } from '../../domain/providers/upstream.js';
import { DomainError } from '../../domain/errors.js';
import { addressOf, countChallengeRequest } from '../client-address.js';
import { answerConnectionCallback } from './account-connections.js';
import { setSessionCookie } from '../cookies.js';
import type { AppDeps } from '../deps.js';
import { browserDevice } from '../device.js';
import { handleError } from '../errors.js';
import { loginOffers } from '../login-page/offers.js';
import { signedInPage } from '../login-page/render.js';
import { isFormPost, landingOrigins, sendPage } from '../login-page/respond.js';
import { secondFactorPage } from '../login-page/second-factor-page.js';
import { setFlowCookie } from '../flow-cookie.js';
import { flowSubmitOrigins, refuseForeignOrigin, returnToAllowList } from '../origins.js';
import { presentedBinding } from '../provider-cookie.js';
import {
  providerFailure,
  sendProviderFailurePage,
  sendToProvider,
} from '../provider-pages/respond.js';
import { REGISTRATION_PATH } from '../registration-page/render.js';
import { sendSignUpFailure } from '../registration-page/respond.js';
import { ClientIpHeader, IdParams, responses, seeOther } from '../schemas.js';
import { BROWSER_ERRORS, OPTIONAL_SERVICE_TOKEN } from '../flow-schemas.js';
import { flowDepsOf } from '../flow-routes.js';

const StartBody = Type.Object(
  {
    csrf_token: Type.Optional(Type.String({ description: 'From GET /v1/login' })),
    provider: Type.String({ description: 'The provider id (SERVICE_PROVIDERS_FILE)' }),
  },
  { additionalProperties: false },
);
const StartResult = Type.Object(
  {
    redirect_to: Type.String({
      description: "The provider's authorization URL: send the browser there (a navigation)",
    }),
  },
  { description: 'Where the browser goes to sign in with the provider.' },
);
const CallbackParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
const CallbackFields = Type.Object(
  {
    state: Type.Optional(Type.String()),
    code: Type.Optional(Type.String()),
    iss: Type.Optional(Type.String()),
    error: Type.Optional(Type.String()),
    error_description: Type.Optional(Type.String()),
  },
  {
    // Providers add their own (Google's `scope`, `authuser`, `prompt`; Microsoft's `session_state`).
    additionalProperties: true,
    description: "The provider's authorization response (RFC 6749 4.1.2, RFC 9207)",
  },
);

/** The response's parameters as strings: a repeated one (an array) is not the provider's. */
function responseParams(fields: Record<string, unknown> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(fields ?? {}).filter(
      (entry): entry is [string, string] => typeof entry[1] === 'string',
    ),
  );
}

const page = (description: string) =>
  Type.Unsafe({ description, content: { 'text/html': { schema: Type.String() } } });

/**
 * Sign-in with upstream providers (docs/providers.md): `POST /v1/flows/{id}/provider`
 * starts it from a login flow, `POST /v1/registration/{id}/provider` from the sign-up page,
 * `GET|POST /v1/providers/{id}/callback` is where the provider
 * sends the browser back (POST for a provider answering by form post, Apple).
 */
export function providerRoutes(app: FastifyInstance, deps: AppDeps): void {
  const flowDeps = { ...deps, ...flowDepsOf(deps), store: deps.store };
  const loginUi = deps.config.loginUiUrl;

  /** The login and sign-up buttons: counted per client address, then on to the provider. */
  async function answerStart(
    request: FastifyRequest<{ Body: Static<typeof StartBody> }>,
    reply: FastifyReply,
    start: (
      provider: UpstreamProvider,
      at: { browser: string; origin: string; address: string },
    ) => Promise<string>,
  ) {
    const address = await countChallengeRequest(deps, request);
    const provider = deps.providers.get(request.body.provider);
    if (!provider) throw new DomainError('not_found');
    return sendToProvider(deps, request, reply, provider, (browser, origin) =>
      start(provider, { browser, origin, address }),
    );
  }

  const startSchema = (fields: {
    operationId: string;
    summary: string;
    description: string;
    statuses: number[];
  }) => ({
    operationId: fields.operationId,
    summary: fields.summary,
    tags: ['flows'],
    description: `${fields.description} JSON answers { redirect_to } (the provider's URL, to navigate the browser to); a form post (the hosted page's button) answers a page that goes there. Sets the browser binding cookie service_provider_browser. The provider sends the browser back to GET /v1/providers/{id}/callback. Counted per client address (SERVICE_RATE_LIMIT_CHALLENGE_IP). docs/providers.md.`,
    security: OPTIONAL_SERVICE_TOKEN,
    consumes: ['application/json', 'application/x-www-form-urlencoded'],
    params: IdParams,
    headers: ClientIpHeader,
    body: StartBody,
    response: responses(
      {
        200: Type.Unsafe({
          description: "JSON: the provider's URL; a form post: a page that goes there",
          content: {
            'application/json': { schema: StartResult },
            'text/html': { schema: Type.String() },
          },
        }),
      },
      fields.statuses,
      { html: true },
    ),
  });

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof StartBody> }>(
    '/v1/flows/:id/provider',
    {
      config: { action: 'flow_provider' },
      onRequest: refuseForeignOrigin((request) => flowSubmitOrigins(request, deps.config)),
      errorHandler: async (error, request, reply) => {
        if (!isFormPost(request)) return handleError(error, request, reply);
        const flow = await deps.store.findFlow(request.params.id).catch(() => undefined);
        const provider = deps.providers.get(String(request.body?.provider ?? ''));
        return sendProviderFailurePage(request, reply, error, {
          label: provider?.label ?? 'the provider',
          ...(flow ? { flow, offers: loginOffers(deps, flow) } : {}),
          now: deps.clock.now(),
        });
      },
      schema: startSchema({
        operationId: 'startFlowProvider',
        summary: 'Sign in to a login flow with an upstream provider',
        description: "Starts the provider's sign-in for the login flow.",
        statuses: [...BROWSER_ERRORS, 404, 429],
      }),
    },
    (request, reply) =>
      answerStart(request, reply, (provider, { browser, origin }) =>
        startProviderSignIn(flowDeps, {
          flowId: request.params.id,
          csrfToken: request.body.csrf_token,
          providerId: provider.id,
          browser,
          origin,
        }),
      ),
  );

  app.post<{ Params: Static<typeof IdParams>; Body: Static<typeof StartBody> }>(
    `${REGISTRATION_PATH}/:id/provider`,
    {
      config: { action: 'registration_provider' },
      onRequest: [
        // Closed registration: no route, as for the other sign-up routes.
        async (_request, reply) => {
          if (!deps.config.registration.open) return reply.callNotFound();
        },
        refuseForeignOrigin((request) => flowSubmitOrigins(request, deps.config)),
      ],
      errorHandler: async (error, request, reply) => {
        if (!isFormPost(request)) return handleError(error, request, reply);
        const found = await deps.store.findFlow(request.params.id).catch(() => undefined);
        const flow = found?.kind === 'registration' ? found : undefined;
        return sendSignUpFailure(request, reply, error, {
          ...(flow ? { flow } : {}),
          formUsable: false,
          emailRequired: deps.config.registration.email !== 'optional',
          now: deps.clock.now(),
        });
      },
      schema: startSchema({
        operationId: 'startRegistrationProvider',
        summary: 'Sign up with an upstream provider, from a registration flow',
        description:
          "Only with SERVICE_REGISTRATION=open (else 404 not_found). Checks the registration flow (open, its CSRF token), then starts the provider's sign-in on a new login flow carrying the registration flow's return_to: an account the provider proves and Tessera does not know is created (docs/providers.md), a known one is signed in. The new flow is counted like GET /v1/login (SERVICE_RATE_LIMIT_FLOW_CREATE_IP); with SERVICE_LOGIN_UI_URL the callback sends the browser to the login UI with that flow.",
        statuses: [...BROWSER_ERRORS, 404, 429],
      }),
    },
    (request, reply) =>
      answerStart(request, reply, async (provider, at) => {
        const { flow, url } = await startProviderSignUp(flowDeps, {
          registrationFlowId: request.params.id,
          csrfToken: request.body.csrf_token,
          providerId: provider.id,
          ...at,
          allowList: returnToAllowList(request, deps.config),
        });
        // As GET /v1/login does: the login UI reads this flow's CSRF token with it.
        if (loginUi) setFlowCookie(reply, flow, deps.clock.now());
        return url;
      }),
  );

  async function callback(
    request: FastifyRequest<{ Params: Static<typeof CallbackParams> }>,
    reply: FastifyReply,
    params: Readonly<Record<string, string>>,
  ): Promise<FastifyReply> {
    const now = deps.clock.now();
    const provider = deps.providers.get(request.params.id);
    if (!provider) throw new DomainError('not_found');
    const address = await addressOf(deps, request);
    const count = (outcome: string) => deps.providerSignIns.record(provider.id, outcome);
    let taken: TakenAuthorization;
    try {
      taken = await takeAuthorization(flowDeps, {
        providerId: provider.id,
        state: params.state,
        browser: presentedBinding(request),
      });
    } catch (error) {
      const code = providerFailure(error, provider.label)?.code ?? 'internal_error';
      count(code);
      deps.audit.enqueue(BROWSER_ACTOR, {
        action: 'login',
        target_identity: null,
        outcome: code,
        details: { flow_id: null, provider: provider.id, sign_in_method: 'provider', address },
      });
      return sendProviderFailurePage(request, reply, error, { label: provider.label, now });
    }
    if (taken.record.purpose === 'connect') {
      return answerConnectionCallback(deps, request, reply, taken, params);
    }
    const flowId = taken.record.flow_id ?? '';
    const attempt = signInAttempt(flowId, address, { provider: provider.id }, 'provider');
    const finish = (outcome: string) => {
      count(outcome);
      recordSignIn(deps.audit, attempt, outcome);
    };
    try {
      const { flow, result } = await finishProviderSignIn(flowDeps, taken, {
        params,
        address,
        device: browserDevice(request, address),
        notes: attempt,
      });
      reply.header('cache-control', 'no-store');
      if (!result.completed) {
        finish('second_factor_required');
        if (loginUi) return reply.redirect(uiUrl(loginUi, flow.id), 303);
        const form = secondFactorPage({ flow: result.flow, methods: result.secondFactor });
        return sendPage(reply, 200, form, landingOrigins(result.flow));
      }
      finish('ok');
      setSessionCookie(reply, result.minted.token, {
        cookieDomain: deps.config.cookieDomain,
        sessionTtlMs: deps.sessionTtlMs,
      });
      if (result.returnTo) return reply.redirect(result.returnTo, 303);
      return sendPage(reply, 200, signedInPage(result.minted.session));
    } catch (error) {
      finish(providerFailure(error, provider.label)?.code ?? 'internal_error');
      // The operator's login UI reads what went wrong from GET /v1/flows/{id} (recorded).
      if (loginUi && providerFailure(error, provider.label) !== null) {
        request.errorCode = providerFailure(error, provider.label)!.code;
        return reply.redirect(uiUrl(loginUi, flowId), 303);
      }
      const flow: FlowRecord | undefined = await deps.store.findFlow(flowId).catch(() => undefined);
      return sendProviderFailurePage(request, reply, error, {
        label: provider.label,
        ...(flow ? { flow, offers: loginOffers(deps, flow) } : {}),
        now,
      });
    }
  }

  const callbackSchema = (method: string) => ({
    operationId: `providerCallback${method}`,
    summary: `The provider's return (${method})`,
    tags: ['flows'],
    description:
      "Where a provider sends the browser back: the redirect URI to register with it. Finishes the sign-in (or the account page's connection) the state names, in the browser that started it. Answers with a 303 (return_to, the account page, or the login UI with ?flow=), or a page. docs/providers.md.",
    // A browser's navigation from the provider, never a service's call.
    security: [{}],
    params: CallbackParams,
    headers: ClientIpHeader,
    response: responses(
      {
        200: page('Signed in, the second factor asked for, or the login page with the error'),
        303: seeOther('Signed in: on to return_to; or to the login UI or the account page'),
      },
      [...BROWSER_ERRORS, 404, 409, 429],
      { html: true },
    ),
  });

  app.get<{ Params: Static<typeof CallbackParams>; Querystring: Static<typeof CallbackFields> }>(
    callbackPath(':id'),
    {
      config: { action: 'provider_callback' },
      schema: { ...callbackSchema('Get'), querystring: CallbackFields },
    },
    (request, reply) => callback(request, reply, responseParams(request.query)),
  );

  app.post<{ Params: Static<typeof CallbackParams>; Body: Static<typeof CallbackFields> }>(
    callbackPath(':id'),
    {
      config: { action: 'provider_callback' },
      schema: {
        ...callbackSchema('Post'),
        consumes: ['application/x-www-form-urlencoded'],
        body: CallbackFields,
      },
    },
    (request, reply) => callback(request, reply, responseParams(request.body)),
  );
}

function uiUrl(loginUi: string, flowId: string): string {
  const target = new URL(loginUi);
  target.searchParams.set('flow', flowId);
  return target.href;
}
