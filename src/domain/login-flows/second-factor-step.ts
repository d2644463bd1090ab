import { secretsEqual } from '../../lib/tokens.js';
import { DomainError } from '../errors.js';
import { consumeRateLimit } from '../rate-limit/rate-limiter.js';
import type { SignInMethodId } from '../sign-in/methods.js';
import {
  type SecondFactorLimitDeps,
  type SecondFactorMethod,
  consumeSecondFactorLimit,
} from '../sign-in/second-factor.js';
import type { Store } from '../store.js';
import { addressKey } from './address-key.js';
import { awaitsSecondFactor } from './flow.js';
import {
  type CompletedFlow,
  type FlowDeps,
  type FlowSubmission,
  completeFlowSignIn,
  findFlow,
  refuseOnFlow,
} from './flow-service.js';

export interface SecondFactorStepDeps extends FlowDeps, SecondFactorLimitDeps {
  store: FlowDeps['store'] & Pick<Store, 'findIdentityById' | 'hitRateLimit'>;
}

/**
 * `POST /v1/flows/{id}/<second factor>`: the flow's second step, in the order of the first
 * (flow, CSRF, fields, per-address limit) plus the per-identity limit of second factors.
 * A wrong code is recorded on the flow and counts to the same attempt cap as a wrong
 * password. Completion is the same claim (`completeFlowSignIn`), from
 * `second_factor_required`, which spends the code only for the submission that claimed
 * the flow: racing right answers mint one session and count no failure. The session says
 * how the user signed in first (`authenticated_via`) and that a second factor followed
 * (`aal2`). Names no method: the method is handed in.
 */
export async function submitSecondFactor<Input, Deps>(
  deps: SecondFactorStepDeps & Deps,
  method: SecondFactorMethod<string, Input, Deps>,
  input: FlowSubmission,
): Promise<CompletedFlow> {
  const flow = await findFlow(deps, input.flowId);
  if (!awaitsSecondFactor(flow, deps.clock.now()) || flow.identity_id === null) {
    throw new DomainError('invalid_token');
  }
  if (flow.first_method !== null) input.notes.signInMethod = flow.first_method;
  const csrf = input.csrfToken;
  if (typeof csrf !== 'string' || !secretsEqual(flow.csrf_token, csrf)) {
    throw new DomainError('invalid_token');
  }
  const submitted = method.parse(input.fields);

  await consumeRateLimit(
    deps.store,
    deps.clock,
    `flow:ip:${addressKey(input.address)}`,
    deps.flows.submitRule,
  );
  const identity = await deps.store.findIdentityById(flow.identity_id);
  if (!identity) throw new DomainError('invalid_token');
  input.notes.identityId = identity.id;
  await consumeSecondFactorLimit(deps, identity.id);

  const outcome =
    identity.state === 'active'
      ? await method.verify(deps, identity, submitted)
      : ({ failure: 'identity_disabled' } as const);
  if ('failure' in outcome) return refuseOnFlow(deps, flow.id, outcome.failure);

  // Written by awaitSecondFactor from the first factor's own id.
  const firstMethod = flow.first_method as SignInMethodId;
  const by = { id: firstMethod, assurance: 'aal2', redeem: [outcome.redeem] } as const;
  const minted = await completeFlowSignIn(
    deps,
    flow,
    'second_factor_required',
    identity,
    by,
    input.device,
  );
  input.notes.sessionId = minted.session.id;
  return { returnTo: flow.return_to, minted };
}
