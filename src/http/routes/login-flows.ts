import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { loginOffers } from '../login-page/offers.js';
import {
  awaitsSecondFactor,
  isFlowOpen,
  toFlowView,
  toStartedFlow,
} from '../../domain/login-flows/flow.js';
import { DomainError } from '../../domain/errors.js';
import { SECOND_FACTOR_REQUIRED } from '../../domain/sign-in/second-factor.js';
import { secondFactorPage } from '../login-page/second-factor-page.js';
import {
  challengeForFlow,
  findFlowWithErrors,
  requireAvailable,
  startFlow,
  submitToFlow,
} from '../../domain/login-flows/flow-service.js';
import { toIso } from '../../lib/clock.js';
import { addressOf, countChallengeRequest } from '../client-address.js';
import type { AppDeps } from '../deps.js';
import { handleError } from '../errors.js';
import { presentsFlowCookie, setFlowCookie } from '../flow-cookie.js';
import { flowSubmissionOf, sendSignedIn } from '../flow-submission.js';
import {
  FLOW_METHODS,
  type FlowMethodSurface,
  flowChallengeUrl,
  flowMethodUrl,
} from '../flow-methods.js';
import {
  isFormPost,
  landingOrigins,
  prefersHtml,
  sendFailurePage,
  sendPage,
  signedInSession,
} from '../login-page/respond.js';
import { loginPage } from '../login-page/render.js';
import {
  flowSubmitOrigins,
  loginUiOrigin,
  refuseForeignOrigin,
  returnToAllowList,
} from '../origins.js';
import { ClientIpHeader, IdParams, jsonOrPage, responses, seeOther } from '../schemas.js';
import { flowPage } from '../relying-party.js';
import { flowDepsOf, flowSubmitOptions, postedFlow } from '../flow-routes.js';
import {
  BROWSER_ERRORS,
  CHALLENGE_BODIES,
  ChallengeBody,
  ChallengeOptionsSchema,
  FlowDetailSchema,
  OPTIONAL_SERVICE_TOKEN,
  StartedFlowSchema,
  type SubmitRoute,
  pascalCase,
} from '../flow-schemas.js';
import { attemptOf, signInAuditHooks } from '../sign-in-audit.js';

const LoginQuery = Type.Object({ return_to: Type.Optional(Type.String()) });

export function loginFlowRoutes(app: FastifyInstance, deps: AppDeps): void {
  const flowDeps = flowDepsOf(deps);

  const uiOrigin = loginUiOrigin(deps.config);

  app.get<{ Querystring: Static<typeof LoginQuery> }>(
    '/v1/login',
    {
      // HEAD must not create flows (nor spend the caller's rate limit).
      exposeHeadRoute: false,
      config: { action: 'flow_create' },
      errorHandler: (error, request, reply) =>
        prefersHtml(request)
          ? sendFailurePage(request, reply, error, { formUsable: false, now: deps.clock.now() })
          : handleError(error, request, reply),
      schema: {
        operationId: 'startLogin',
        summary: 'Start a login flow (or show the login page)',
        tags: ['flows'],
        description:
          'Starts a login flow. JSON for API clients; a browser asking for HTML gets the hosted login page, or a 303 to SERVICE_LOGIN_UI_URL?flow=<id> when set.',
        security: OPTIONAL_SERVICE_TOKEN,
        querystring: LoginQuery,
        headers: ClientIpHeader,
        response: responses(
          {
            200: jsonOrPage(
              StartedFlowSchema,
              'The new flow (JSON), or the login page for a browser',
            ),
            303: seeOther('To the operator login UI, SERVICE_LOGIN_UI_URL?flow=<id>'),
          },
          [...BROWSER_ERRORS, 429],
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const flow = await startFlow(flowDeps, {
        returnTo: request.query.return_to,
        address: await addressOf(deps, request),
        allowList: returnToAllowList(request, deps.config),
      });
      if (!prefersHtml(request)) {
        return reply
          .header('cache-control', 'no-store')
          .send(toStartedFlow(flow, deps.clock.now()));
      }
      if (deps.config.loginUiUrl) {
        const target = new URL(deps.config.loginUiUrl);
        target.searchParams.set('flow', flow.id);
        setFlowCookie(reply, flow, deps.clock.now());
        return reply.header('cache-control', 'no-store').redirect(target.href, 303);
      }
      const signedIn = await signedInSession(deps, request);
      const offers = loginOffers(deps, flow);
      return sendPage(reply, 200, loginPage({ flow, signedIn, offers }), landingOrigins(flow));
    },
  );

  app.get<{ Params: Static<typeof IdParams> }>(
    '/v1/flows/:id',
    {
      config: { action: 'flow_read' },
      schema: {
        operationId: 'getFlow',
        summary: 'Get a login flow and its errors',
        tags: ['flows'],
        description:
          'A flow with the errors recorded on it, newest last. Its CSRF token only for the login UI, in the browser the flow was started in.',
        security: OPTIONAL_SERVICE_TOKEN,
        params: IdParams,
        headers: ClientIpHeader,
        response: responses({ 200: FlowDetailSchema }, [...BROWSER_ERRORS, 404]),
      },
    },
    async (request, reply) => {
      await addressOf(deps, request);
      const { flow, errors } = await findFlowWithErrors(deps, request.params.id);
      // External login UI mode: the UI's script needs the token to submit the flow the
      // 303 sent it. Only its origin gets it (CORS lets no other page read this anyway),
      // and only with the cookie set at that 303, so a flow id seen elsewhere (history,
      // logs, a Referer) lets nobody else, browser or not, fetch the token.
      const fromUi = uiOrigin !== null && request.headers.origin === uiOrigin;
      const reveal = fromUi && presentsFlowCookie(request, flow);
      const now = deps.clock.now();
      const secondFactor =
        awaitsSecondFactor(flow, now) && flow.identity_id !== null
          ? await flowDeps.secondFactorsOf(flow.identity_id)
          : [];
      return reply.header('cache-control', 'no-store').send({
        ...toFlowView(flow, now, secondFactor),
        ...(reveal ? { csrf_token: flow.csrf_token } : {}),
        errors: errors.map((row) => ({ error: row.error, at: toIso(row.at) })),
      });
    },
  );

  /**
   * A form post's failure: the page again, or a dead end, never a raw JSON document. The
   * page is the method's own step (`formPage`) where it has one, else the login page.
   */
  const formFailureOf =
    (surface: FlowMethodSurface, step: 'challenge' | 'submit') =>
    async (
      error: unknown,
      request: FastifyRequest<SubmitRoute>,
      reply: FastifyReply,
    ): Promise<FastifyReply> => {
      const { flow, formUsable, now } = await postedFlow(deps, request, isFlowOpen);
      const username = request.body?.username;
      const formPage = surface.formPage;
      const fields: Record<string, unknown> = { ...request.body };
      delete fields.csrf_token;
      return sendFailurePage(request, reply, error, {
        flow,
        formUsable,
        username: typeof username === 'string' ? username : undefined,
        now,
        ...(flow ? { offers: loginOffers(deps, flow) } : {}),
        ...(flow && formPage
          ? { renderForm: (refusal) => formPage({ flow, step, fields, error: refusal }) }
          : {}),
      });
    };

  for (const surface of FLOW_METHODS) {
    const { method, challenge } = surface;
    if (!challenge) continue;
    const formFailure = formFailureOf(surface, 'challenge');
    app.post<SubmitRoute>(
      flowChallengeUrl(method.id),
      {
        config: { action: `flow_${method.id}_options` },
        onRequest: refuseForeignOrigin((request) => flowSubmitOrigins(request, deps.config)),
        errorHandler: (error, request, reply) =>
          isFormPost(request) && surface.formPage
            ? formFailure(error, request as FastifyRequest<SubmitRoute>, reply)
            : handleError(error, request, reply),
        schema: {
          operationId: `challengeFlow${pascalCase(method.id)}`,
          summary: challenge.summary,
          tags: ['flows'],
          description: challenge.description,
          security: OPTIONAL_SERVICE_TOKEN,
          ...(surface.formPage
            ? { consumes: ['application/json', 'application/x-www-form-urlencoded'] }
            : {}),
          params: IdParams,
          headers: ClientIpHeader,
          body: CHALLENGE_BODIES.get(method.id) ?? ChallengeBody,
          response: responses(
            {
              200: surface.formPage
                ? jsonOrPage(
                    challenge.response ?? ChallengeOptionsSchema,
                    'The challenge (JSON), or for a form post the page asking for the answer',
                  )
                : (challenge.response ?? ChallengeOptionsSchema),
            },
            [...BROWSER_ERRORS, 404, 429],
            { html: surface.formPage !== undefined },
          ),
        },
      },
      async (request, reply) => {
        // A method turned off is no route: not counted, nothing looked up.
        requireAvailable(flowDeps, method);
        // Counted before the flow is looked up: each request costs a read and a challenge
        // write, and an unauthenticated caller needs no valid flow to send it.
        await countChallengeRequest(deps, request);
        const { csrf_token: csrfToken, ...fields } = request.body ?? {};
        const { flow, options } = await challengeForFlow(flowDeps, method, {
          flowId: request.params.id,
          csrfToken,
          page: flowPage(request, deps.config),
          fields,
        });
        if (isFormPost(request) && surface.formPage) {
          const page = surface.formPage({ flow, step: 'challenge', fields: options });
          return sendPage(
            reply.header('cache-control', 'no-store'),
            200,
            page,
            landingOrigins(flow),
          );
        }
        return reply.header('cache-control', 'no-store').send({ options });
      },
    );
  }

  for (const surface of FLOW_METHODS) {
    const { method } = surface;
    app.post<SubmitRoute>(
      flowMethodUrl(method.id),
      flowSubmitOptions(deps, {
        surface,
        signInAudit: signInAuditHooks(deps.audit, method, method.id),
        formFailure: formFailureOf(surface, 'submit'),
        signedIn:
          'Signed in: the session (JSON), or the signed-in page for a form post without return_to; for a form post to an account with a second factor, the page asking for its code (no session yet)',
      }),
      async (request, reply) => {
        const submission = await flowSubmissionOf(deps, request, method);
        const result = await submitToFlow(flowDeps, method, {
          ...submission,
          page: flowPage(request, deps.config),
        });
        if (!result.completed) {
          // No session: a JSON client that does not know the step gets a refusal it cannot
          // mistake for a sign-in; the hosted page asks for the code (docs/two-factor.md).
          const attempt = attemptOf(request);
          if (attempt) attempt.outcome = 'second_factor_required';
          if (!isFormPost(request)) throw new DomainError('forbidden', SECOND_FACTOR_REQUIRED);
          const page = secondFactorPage({ flow: result.flow, methods: result.secondFactor });
          return sendPage(reply, 200, page, landingOrigins(result.flow));
        }
        return sendSignedIn(deps, request, reply, result);
      },
    );
  }
}
