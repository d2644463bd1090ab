import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DomainError } from '../../domain/errors.js';
import { awaitsSecondFactor } from '../../domain/login-flows/flow.js';
import { submitSecondFactor } from '../../domain/login-flows/second-factor-step.js';
import type { AppDeps } from '../deps.js';
import { flowSubmissionOf, sendSignedIn } from '../flow-submission.js';
import {
  SECOND_FACTOR_SURFACES,
  type SecondFactorSurface,
  flowMethodUrl,
} from '../flow-methods.js';
import { formMessage, sendFailurePage } from '../login-page/respond.js';
import { secondFactorPage } from '../login-page/second-factor-page.js';
import { signInAuditHooks } from '../sign-in-audit.js';
import { type SubmitRoute } from '../flow-schemas.js';
import { flowDepsOf, flowSubmitOptions, postedFlow } from '../flow-routes.js';

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
    const { flow, formUsable, now } = await postedFlow(deps, request, awaitsSecondFactor);
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
    app.post<SubmitRoute>(
      flowMethodUrl(method.id),
      flowSubmitOptions(deps, {
        surface,
        signInAudit: signInAuditHooks(deps.audit, { claim }),
        formFailure: (error, request, reply) => formFailure(surface, error, request, reply),
        signedIn:
          'Signed in (aal2): the session (JSON), or the signed-in page for a form post without return_to',
      }),
      async (request, reply) => {
        const submission = await flowSubmissionOf(deps, request);
        const completed = await submitSecondFactor(flowDeps, method, submission);
        return sendSignedIn(deps, request, reply, completed);
      },
    );
  }
}
