import type { FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, type ErrorCode } from '../../domain/errors.js';
import { type FlowRecord, isFlowOpen } from '../../domain/login-flows/flow.js';
import { ProviderRefusal } from '../../domain/providers/refusal.js';
import { UpstreamFailure, type UpstreamProvider } from '../../domain/providers/upstream.js';
import type { AppDeps } from '../deps.js';
import { ERROR_STATUS, refusalOf } from '../errors.js';
import type { LoginOffers } from '../login-page/offers.js';
import { loginPage, messagePage } from '../login-page/render.js';
import { isFormPost, landingOrigins, restartUrl, sendPage } from '../login-page/respond.js';
import { browserBinding } from '../provider-cookie.js';
import { continuePage } from './render.js';

/** The service's origin as browsers address it: SERVICE_PUBLIC_URL, else the request's. */
export function serviceOrigin(request: FastifyRequest, deps: Pick<AppDeps, 'config'>): string {
  return deps.config.publicUrl ?? `${request.protocol}://${request.host}`;
}

/**
 * Every way to the provider (a login or sign-up button, the account page's "Connect"):
 * binds the browser, lets `start` store the authorization request and answer the
 * provider's URL, and answers JSON `{ redirect_to }`, or for a form post a page that goes
 * there. A provider whose discovery fails is down, not the request wrong: 503.
 */
export async function sendToProvider(
  deps: Pick<AppDeps, 'config'>,
  request: FastifyRequest,
  reply: FastifyReply,
  provider: UpstreamProvider,
  start: (browser: string, origin: string) => Promise<string>,
) {
  const browser = browserBinding(request, reply, {
    crossSitePost: provider.responseMode === 'form_post',
    maxAgeSeconds: Math.ceil(deps.config.flowTtlMs / 1000),
  });
  let url: string;
  try {
    url = await start(browser, serviceOrigin(request, deps));
  } catch (error) {
    if (error instanceof UpstreamFailure) throw new DomainError('unavailable');
    throw error;
  }
  reply.header('cache-control', 'no-store');
  if (!isFormPost(request)) return { redirect_to: url };
  return sendPage(reply, 200, continuePage(provider, url));
}

/** A refusal at a provider's callback, as the page words it and the error model codes it. */
export interface ProviderFailure {
  code: ErrorCode;
  status: number;
  message: string;
}

function failure(code: ErrorCode, message: string, status = ERROR_STATUS[code]): ProviderFailure {
  return { code, status, message };
}

/**
 * The sentence for each refusal (typed reasons, never matched on text). `label` names the
 * provider, so the user knows which sign-in failed.
 */
export function providerFailure(thrown: unknown, label: string): ProviderFailure | null {
  if (thrown instanceof ProviderRefusal) {
    switch (thrown.reason) {
      case 'state_invalid':
        return failure(
          'invalid_token',
          `This sign-in with ${label} cannot be finished in this browser: it was already used, has expired, or was started elsewhere. Start again.`,
        );
      case 'not_registered':
        return failure(
          'forbidden',
          `No account here is connected to this ${label} account, and new accounts cannot be created here. Sign in another way; you can then connect ${label} on your account page.`,
        );
      case 'email_taken':
        return failure(
          'email_taken',
          `An account with the email address of this ${label} account already exists. Sign in to that account, then connect ${label} on your account page.`,
        );
      case 'conflict':
        return failure(
          'username_taken',
          `Another sign-in changed this account meanwhile. Try again.`,
        );
      case 'linked_elsewhere':
        return failure(
          'validation_error',
          `This ${label} account is connected to another account here.`,
        );
      case 'not_signed_in':
        return failure(
          'invalid_token',
          `You are no longer signed in as the account that asked to connect ${label}. Sign in and try again.`,
        );
    }
  }
  if (thrown instanceof UpstreamFailure) {
    switch (thrown.reason) {
      case 'denied':
        return failure('invalid_credentials', `${label} did not sign you in (${thrown.detail}).`);
      case 'invalid_response':
        return failure(
          'invalid_credentials',
          `The answer from ${label} could not be verified, so it was refused. Try again.`,
        );
      case 'unreachable':
        return failure('unavailable', `${label} could not be reached. Try again in a moment.`);
    }
  }
  const error = refusalOf(thrown);
  if (!error) return null;
  switch (error.code) {
    case 'invalid_credentials':
      return failure(error.code, `The sign-in with ${label} was not accepted.`);
    case 'identity_disabled':
      return failure(error.code, 'This account is disabled. Contact your administrator.');
    case 'rate_limited':
      return failure(
        error.code,
        `Too many attempts. Try again in ${error.retryAfterSeconds ?? 60} seconds.`,
      );
    case 'invalid_token':
      return failure(error.code, 'This sign-in has expired or was already used. Start again.');
    case 'not_found':
      return failure(error.code, 'This sign-in does not exist or has been cleaned up.');
    case 'unavailable':
    case 'timeout':
      return failure(error.code, 'Sign-in is temporarily unavailable. Try again in a moment.');
    default:
      return failure(error.code, `The sign-in with ${label} did not work. Try again.`);
  }
}

/**
 * A provider sign-in's failure for a browser: the login page again with the sentence above
 * it while the flow is open (another way in may work), else the sentence and a way to
 * start again. The status is the error model's.
 */
export function sendProviderFailurePage(
  request: FastifyRequest,
  reply: FastifyReply,
  thrown: unknown,
  context: { label: string; flow?: FlowRecord; offers?: LoginOffers; now: number },
): FastifyReply {
  const refused = providerFailure(thrown, context.label);
  if (!refused) {
    request.log.error({ err: thrown }, 'unhandled error');
    request.errorCode = 'internal_error';
    return sendPage(
      reply,
      500,
      messagePage({ title: 'Something went wrong', message: 'Try again later.' }),
    );
  }
  request.errorCode = refused.code;
  if (thrown instanceof DomainError && thrown.retryAfterSeconds !== undefined) {
    reply.header('retry-after', String(thrown.retryAfterSeconds));
  }
  const { flow } = context;
  if (flow && isFlowOpen(flow, context.now)) {
    const page = loginPage({
      flow,
      error: refused.message,
      ...(context.offers ? { offers: context.offers } : {}),
    });
    return sendPage(reply, refused.status, page, landingOrigins(flow));
  }
  const page = messagePage({
    title: 'Sign-in failed',
    message: refused.message,
    restartUrl: restartUrl(flow),
  });
  return sendPage(reply, refused.status, page);
}
