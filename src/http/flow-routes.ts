import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { FlowDeps } from '../domain/login-flows/flow-service.js';
import type { FlowRecord } from '../domain/login-flows/flow.js';
import type { SecondFactorStepDeps } from '../domain/login-flows/second-factor-step.js';
import type { SignInMethodDeps } from '../domain/sign-in/methods.js';
import {
  type SecondFactorMethodDeps,
  enrolledSecondFactors,
} from '../domain/sign-in/second-factors.js';
import { secretsEqual } from '../lib/tokens.js';
import type { AppDeps } from './deps.js';
import { handleError } from './errors.js';
import type { FlowMethodSurface, SecondFactorSurface } from './flow-methods.js';
import {
  BROWSER_ERRORS,
  OPTIONAL_SERVICE_TOKEN,
  SUBMIT_BODIES,
  SubmitResultSchema,
  type SubmitRoute,
  pascalCase,
} from './flow-schemas.js';
import { isFormPost } from './login-page/respond.js';
import { flowSubmitOrigins, refuseForeignOrigin } from './origins.js';
import { ClientIpHeader, IdParams, jsonOrPage, responses, seeOther } from './schemas.js';
import type { signInAuditHooks } from './sign-in-audit.js';

/** What the flow mechanics and every method, first or second factor, are given. */
export function flowDepsOf(
  deps: AppDeps,
): FlowDeps & SignInMethodDeps & SecondFactorStepDeps & SecondFactorMethodDeps {
  return {
    ...deps,
    flows: {
      ttlMs: deps.config.flowTtlMs,
      maxAttempts: deps.config.flowMaxAttempts,
      createRule: deps.config.rateLimits.flowCreateIp,
      submitRule: deps.config.rateLimits.loginIp,
      requireVerifiedEmail: deps.config.registration.email === 'verified',
    },
    secondFactorsOf: (identityId) => enrolledSecondFactors(deps.store, identityId),
  };
}

/**
 * The flow a failed form post to `POST /v1/flows/{id}/<method>` names, and whether its form
 * may be shown again: the flow is in the state the route serves (`usable`) and the post
 * carried its CSRF token, so a cross-site poster is never shown the flow's form.
 */
export async function postedFlow(
  deps: AppDeps,
  request: FastifyRequest<SubmitRoute>,
  usable: (flow: FlowRecord, now: number) => boolean,
): Promise<
  | { flow?: FlowRecord; formUsable: false; now: number }
  | { flow: FlowRecord; formUsable: true; now: number }
> {
  const now = deps.clock.now();
  const id = request.params.id;
  const found = deps.legacyTokens.accepts('flow', id)
    ? await deps.store.findFlow(id).catch(() => undefined)
    : undefined;
  // A registration flow's form is not this page's (docs/registration.md).
  const flow = found?.kind === 'login' ? found : undefined;
  const csrf = request.body?.csrf_token;
  if (
    flow !== undefined &&
    usable(flow, now) &&
    typeof csrf === 'string' &&
    secretsEqual(flow.csrf_token, csrf)
  ) {
    return { flow, formUsable: true, now };
  }
  return { flow, formUsable: false, now };
}

/**
 * The options of `POST /v1/flows/{id}/<method>`, first factor or second: the audit hook
 * first, so a refused Origin is recorded too; a form post's failure answered by
 * `formFailure` with a page, any other with the error model; JSON or form bodies; and the
 * OpenAPI operation, whose 200 says what `signedIn` does.
 */
export function flowSubmitOptions(
  deps: AppDeps,
  {
    surface,
    signInAudit,
    formFailure,
    signedIn,
  }: {
    surface: FlowMethodSurface | SecondFactorSurface;
    signInAudit: ReturnType<typeof signInAuditHooks>;
    formFailure: (
      error: unknown,
      request: FastifyRequest<SubmitRoute>,
      reply: FastifyReply,
    ) => Promise<FastifyReply>;
    signedIn: string;
  },
) {
  const id = surface.method.id;
  return {
    config: { action: `flow_${id}` },
    onRequest: [
      signInAudit.onRequest,
      refuseForeignOrigin((request) => flowSubmitOrigins(request, deps.config)),
    ],
    onResponse: signInAudit.onResponse,
    errorHandler: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) =>
      isFormPost(request)
        ? formFailure(error, request as FastifyRequest<SubmitRoute>, reply)
        : handleError(error, request, reply),
    schema: {
      operationId: `submitFlow${pascalCase(id)}`,
      summary: surface.summary,
      tags: ['flows'],
      description: surface.description,
      security: OPTIONAL_SERVICE_TOKEN,
      consumes: ['application/json', 'application/x-www-form-urlencoded'],
      params: IdParams,
      headers: ClientIpHeader,
      body: SUBMIT_BODIES.get(id),
      response: responses(
        {
          200: jsonOrPage(SubmitResultSchema, signedIn),
          303: seeOther('Signed in (form post): on to return_to'),
        },
        [...BROWSER_ERRORS, 404, 429],
        { html: true },
      ),
    },
  };
}
