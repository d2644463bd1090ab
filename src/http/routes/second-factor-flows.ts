import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DomainError } from '../../domain/errors.js';
import { awaitsSecondFactor } from '../../domain/login-flows/flow.js';
import { submitSecondFactor } from '../../domain/login-flows/second-factor-step.js';
import { isWellFormedToken, secretsEqual } from '../../lib/tokens.js';
import type { AppDeps } from '../deps.js';
import { handleError } from '../errors.js';
import { flowSubmissionOf, sendSignedIn } from '../flow-submission.js';
import {
  SECOND_FACTOR_SURFACES,
  type SecondFactorSurface,
  flowMethodUrl,
} from '../flow-methods.js';
import { formMessage, isFormPost, sendFailurePage } from '../login-page/respond.js';
import { secondFactorPage } from '../login-page/second-factor-page.js';
import { flowSubmitOrigins, refuseForeignOrigin } from '../origins.js';
import { ClientIpHeader, IdParams, jsonOrPage, responses, seeOther } from '../schemas.js';
import { signInAuditHooks } from '../sign-in-audit.js';
import {
  BROWSER_ERRORS,
  OPTIONAL_SERVICE_TOKEN,
  SUBMIT_BODIES,
  SubmitResultSchema,
  type SubmitRoute,
  flowDepsOf,
  pascalCase,
} from './login-flows.js';

/** What the hosted code page says when a second factor was refused. */
function codeMessage(method: string, error: DomainError): string {
  if (error.code !== 'invalid_credentials') return formMessage(error);
  return method === 'recovery_code'
    ? 'That recovery code is not right, or it was already used.'
    : 'That code is not right. Use the newest code; each code works once.';
}

/**
 * `POST /v1/flows/{id}/<second factor>` for each method of SECOND_FACTOR_SURFACES: the
 * same Origin check, `login` audit row, JSON answer, form-post handling and session cookie
 * as a first factor's route, on a flow waiting in `second_factor_required`.
 */
export function secondFactorFlowRoutes(app: FastifyInstance, deps: AppDeps): void {
  const flowDeps = flowDepsOf(deps);

  async function formFailure(
    surface: SecondFactorSurface,
    error: unknown,
    request: FastifyRequest<SubmitRoute>,
    reply: FastifyReply,
  ): Promise<FastifyReply> {
    const now = deps.clock.now();
    const id = request.params.id;
    const flow = isWellFormedToken('flow', id)
      ? await deps.store.findFlow(id).catch(() => undefined)
      : undefined;
    const csrf = ((request.body ?? {}) as Record<string, unknown>).csrf_token;
    const formUsable =
      flow !== undefined &&
      awaitsSecondFactor(flow, now) &&
      typeof csrf === 'string' &&
      secretsEqual(flow.csrf_token, csrf);
    const methods =
      formUsable && flow.identity_id !== null
        ? await flowDeps.secondFactorsOf(flow.identity_id).catch(() => [])
        : [];
    return sendFailurePage(request, reply, error, {
      flow,
      formUsable: formUsable && methods.length > 0,
      now,
      renderForm: (refusal) =>
        secondFactorPage({
          flow: flow!,
          methods,
          error: codeMessage(surface.method.id, refusal),
          failedMethod: surface.method.id,
        }),
    });
  }

  for (const surface of SECOND_FACTOR_SURFACES) {
    const { method } = surface;
    const claim = () => ({ second_factor: method.id });
    const signInAudit = signInAuditHooks(deps.audit, { claim });
    app.post<SubmitRoute>(
      flowMethodUrl(method.id),
      {
        config: { action: `flow_${method.id}` },
        onRequest: [
          signInAudit.onRequest,
          refuseForeignOrigin((request) => flowSubmitOrigins(request, deps.config)),
        ],
        onResponse: signInAudit.onResponse,
        errorHandler: (error, request, reply) =>
          isFormPost(request)
            ? formFailure(surface, error, request as FastifyRequest<SubmitRoute>, reply)
            : handleError(error, request, reply),
        schema: {
          operationId: `submitFlow${pascalCase(method.id)}`,
          summary: surface.summary,
          tags: ['flows'],
          description: surface.description,
          security: OPTIONAL_SERVICE_TOKEN,
          consumes: ['application/json', 'application/x-www-form-urlencoded'],
          params: IdParams,
          headers: ClientIpHeader,
          body: SUBMIT_BODIES.get(method.id),
          response: responses(
            {
              200: jsonOrPage(
                SubmitResultSchema,
                'Signed in (aal2): the session (JSON), or the signed-in page for a form post without return_to',
              ),
              303: seeOther('Signed in (form post): on to return_to'),
            },
            [...BROWSER_ERRORS, 404, 429],
            { html: true },
          ),
        },
      },
      async (request, reply) => {
        const submission = await flowSubmissionOf(deps, request);
        const completed = await submitSecondFactor(flowDeps, method, submission);
        return sendSignedIn(deps, request, reply, completed);
      },
    );
  }
}
