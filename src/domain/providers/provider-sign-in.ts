import { DomainError } from '../errors.js';
import {
  type FlowDeps,
  type FlowSubmitResult,
  findFlow,
  refuseOnFlow,
  requireOpenFlow,
  startFlow,
  submitToFlow,
} from '../login-flows/flow-service.js';
import type { FlowRecord } from '../login-flows/flow.js';
import type { SessionDevice } from '../sessions/session.js';
import type { Store } from '../store.js';
import type { SignInNotes } from '../sign-in/method.js';
import { providerMethod, type ProviderMethodDeps } from '../sign-in/provider/provider-method.js';
import {
  type AuthorizeDeps,
  type TakenAuthorization,
  authorize,
  providerById,
} from './authorize.js';
import { ProviderRefusal, type ProviderRefusalReason } from './refusal.js';
import { UpstreamFailure } from './upstream.js';

export type ProviderSignInDeps = FlowDeps &
  ProviderMethodDeps &
  AuthorizeDeps & { store: Pick<Store, 'recordFlowError'> };

/**
 * `POST /v1/flows/{id}/provider`: the flow must be open and the CSRF token its own, as for
 * any submission; answers the provider's URL for the browser. Nothing is counted on the
 * flow: going to the provider proves nothing yet.
 */
export async function startProviderSignIn(
  deps: ProviderSignInDeps,
  input: {
    flowId: string;
    csrfToken: unknown;
    providerId: string;
    browser: string;
    origin: string;
  },
): Promise<string> {
  const provider = providerById(deps, input.providerId);
  const flow = await requireOpenFlow(deps, input.flowId, input.csrfToken);
  return authorize(deps, {
    provider,
    purpose: 'sign_in',
    flowId: flow.id,
    identityId: null,
    browser: input.browser,
    origin: input.origin,
    expiresAt: flow.expires_at,
  });
}

/**
 * `POST /v1/registration/{id}/provider`, the sign-up page's buttons: the registration flow
 * must be open and the CSRF token its own. A provider sign-in already signs up an account it
 * does not know when registration is open (and without that there is no sign-up page), so
 * the sign-up runs as the sign-in it is, on a new login flow that carries the registration
 * flow's `return_to` on: one callback, one second-factor step and one set of refusals for
 * both pages. The new flow is counted like any (`startFlow`); answers it with the URL.
 */
export async function startProviderSignUp(
  deps: ProviderSignInDeps,
  input: {
    registrationFlowId: string;
    csrfToken: unknown;
    providerId: string;
    browser: string;
    origin: string;
    address: string;
    allowList: readonly string[];
  },
): Promise<{ flow: FlowRecord; url: string }> {
  const registration = await requireOpenFlow(
    deps,
    input.registrationFlowId,
    input.csrfToken,
    'registration',
  );
  providerById(deps, input.providerId);
  const flow = await startFlow(deps, {
    returnTo: registration.return_to ?? undefined,
    address: input.address,
    allowList: input.allowList,
  });
  const url = await startProviderSignIn(deps, {
    flowId: flow.id,
    csrfToken: flow.csrf_token,
    providerId: input.providerId,
    browser: input.browser,
    origin: input.origin,
  });
  return { flow, url };
}

/** What a flow records for a refusal that is no verdict on credentials (GET /v1/flows/{id}). */
const FLOW_ERRORS: Partial<Record<ProviderRefusalReason, string>> = {
  not_registered: 'registration_closed',
  email_taken: 'email_taken',
};

/**
 * The callback of a sign-in (the request was taken by `takeAuthorization`): the flow must
 * still be open; the code is redeemed (ID token checked); then the flow mechanics with the
 * proven account (`providerMethod`), so the attempt cap, the per-address limit, the second
 * factor and the one transaction that completes the flow and mints are every method's.
 * The flow's CSRF token is the flow's own: the state, bound to this flow and this browser,
 * did its job.
 *
 * Every refusal is recorded on the flow: an answer that failed the checks counts as a
 * failed attempt (`invalid_credentials`); the provider's own error or silence is
 * `provider_error`; an unknown account with registration closed `registration_closed`; an
 * address another identity has `email_taken`.
 */
export async function finishProviderSignIn(
  deps: ProviderSignInDeps,
  taken: TakenAuthorization,
  input: {
    params: Readonly<Record<string, string>>;
    address: string;
    device: SessionDevice;
    notes: SignInNotes;
  },
): Promise<{ flow: FlowRecord; result: FlowSubmitResult }> {
  const flow = await findFlow(deps, taken.record.flow_id ?? '');
  await requireOpenFlow(deps, flow.id, flow.csrf_token);
  const note = (error: string) =>
    deps.store.recordFlowError({ flow_id: flow.id, at: deps.clock.now(), error });
  let account;
  try {
    account = await taken.provider.redeem(taken.request, {
      params: input.params,
      now: deps.clock.now(),
    });
  } catch (error) {
    if (!(error instanceof UpstreamFailure)) throw error;
    if (error.reason === 'invalid_response') {
      await refuseOnFlow(deps, flow.id, 'invalid_credentials').catch((refusal: unknown) => {
        if (!(refusal instanceof DomainError) || refusal.code !== 'invalid_credentials') {
          throw refusal;
        }
      });
    } else {
      await note('provider_error');
    }
    throw error;
  }
  try {
    const result = await submitToFlow(deps, providerMethod, {
      flowId: flow.id,
      csrfToken: flow.csrf_token,
      fields: {
        providerId: taken.provider.id,
        trustEmail: taken.provider.trustEmail,
        account,
      },
      address: input.address,
      device: input.device,
      notes: input.notes,
    });
    return { flow, result };
  } catch (error) {
    const code = error instanceof ProviderRefusal ? FLOW_ERRORS[error.reason] : undefined;
    if (code) await note(code);
    throw error;
  }
}
