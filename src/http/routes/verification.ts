import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, validationError } from '../../domain/errors.js';
import { addressKey } from '../../domain/login-flows/address-key.js';
import { resolveReturnTo } from '../../domain/login-flows/return-to.js';
import { BROWSER_ACTOR } from '../../domain/login-flows/sign-in-audit.js';
import type { MailCodeRecord } from '../../domain/mail-codes/mail-code.js';
import {
  findMailCode,
  isMailCodeOpen,
  mailCodeViewState,
} from '../../domain/mail-codes/mail-codes.js';
import { consumeRateLimit } from '../../domain/rate-limit/rate-limiter.js';
import {
  type VerificationDeps,
  completeEmailVerification,
  resendVerification,
} from '../../domain/verification/email-verification.js';
import { toIso } from '../../lib/clock.js';
import { secretsEqual } from '../../lib/tokens.js';
import { addressOf } from '../client-address.js';
import type { AppDeps } from '../deps.js';
import { handleError } from '../errors.js';
import { mailLocaleOf } from '../mail-locale.js';
import { isFormPost, prefersHtml, sendPage } from '../login-page/respond.js';
import {
  flowSubmitOrigins,
  mailLinks,
  refuseForeignOrigin,
  returnToAllowList,
} from '../origins.js';
import {
  ClientIpHeader,
  IdParams,
  IdentitySchema,
  StringEnum,
  Timestamp,
  jsonOrPage,
  responses,
  seeOther,
} from '../schemas.js';
import { BROWSER_ERRORS, OPTIONAL_SERVICE_TOKEN } from '../flow-schemas.js';
import { VERIFICATION_PATH, verificationPage, verifiedPage } from '../verification-page/render.js';
import { sendVerificationFailure } from '../verification-page/respond.js';

export const VerificationSchema = Type.Object(
  {
    id: Type.String({
      description: 'The verification id (mc_…), from the mail’s link or POST /v1/account/email',
    }),
    flow_id: Type.String({ description: 'Same as id' }),
    state: StringEnum(['pending', 'used', 'superseded', 'failed', 'expired']),
    address: Type.String({ description: 'The address being confirmed' }),
    expires_at: Timestamp,
    return_to: Type.Union([Type.String(), Type.Null()]),
    csrf_token: Type.String({ description: 'For POST /v1/verification/{id} and its resend' }),
  },
  { description: 'An email verification flow.' },
);

const VerificationQuery = Type.Object({
  id: Type.Optional(Type.String({ description: 'The verification id' })),
  token: Type.Optional(
    Type.String({ description: 'From the mail’s link: the page posts it when confirmed' }),
  ),
  return_to: Type.Optional(Type.String()),
});
export const VerificationSubmitBody = Type.Object(
  {
    csrf_token: Type.Optional(Type.String()),
    code: Type.Optional(Type.String({ description: 'The code from the mail' })),
    token: Type.Optional(Type.String({ description: 'Or the token of the mail’s link' })),
    return_to: Type.Optional(Type.String({ description: 'Form posts: where to continue' })),
  },
  { additionalProperties: false },
);
export const VerificationResendBody = Type.Object(
  { csrf_token: Type.Optional(Type.String()), return_to: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
export const VerifiedSchema = Type.Object({
  identity: IdentitySchema,
  return_to: Type.Union([Type.String(), Type.Null()]),
});

type SubmitRoute = { Params: Static<typeof IdParams>; Body: Static<typeof VerificationSubmitBody> };

export { mailLocaleOf } from '../mail-locale.js';

/**
 * The deps of the verification domain: the mail's link points to SERVICE_PUBLIC_URL, or,
 * without one, to the origin the request came to (docs/verification.md says why production
 * sets SERVICE_PUBLIC_URL).
 */
export function verificationDeps(
  deps: AppDeps,
  request: FastifyRequest,
): AppDeps & VerificationDeps {
  return { ...deps, linkTo: mailLinks(request, deps.config, VERIFICATION_PATH, 'id') };
}

const verificationActor = (request: FastifyRequest) => ({
  ...BROWSER_ACTOR,
  details: { via: 'verification', address: request.ip },
});

/**
 * `GET /v1/verification` and its submissions (docs/verification.md): a flow like the login
 * flow, on the mailed code's row. The same Origin check, return_to allow-list and
 * per-address submission limit as a login flow's; the code's own cap and expiry.
 */
export function verificationRoutes(app: FastifyInstance, deps: AppDeps): void {
  const returnToOf = (request: FastifyRequest, raw: string | undefined): string | null =>
    raw === undefined || raw === ''
      ? null
      : resolveReturnTo(raw, returnToAllowList(request, deps.config));

  app.get<{ Querystring: Static<typeof VerificationQuery> }>(
    VERIFICATION_PATH,
    {
      exposeHeadRoute: false,
      config: { action: 'verification_read' },
      errorHandler: (error, request, reply) =>
        prefersHtml(request)
          ? sendVerificationFailure(request, reply, error, {
              formUsable: false,
              returnTo: null,
              now: deps.clock.now(),
            })
          : handleError(error, request, reply),
      schema: {
        operationId: 'getVerification',
        summary: 'An email verification flow (or its page)',
        tags: ['flows'],
        description:
          'JSON for an operator’s own UI (the flow and its CSRF token); a browser gets the hosted page: the code form, or, with the mail’s token, a button that confirms. Changes nothing: a mail scanner fetching the link verifies nothing.',
        security: OPTIONAL_SERVICE_TOKEN,
        querystring: VerificationQuery,
        headers: ClientIpHeader,
        response: responses(
          { 200: jsonOrPage(VerificationSchema, 'The flow (JSON), or the page for a browser') },
          [...BROWSER_ERRORS, 404],
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      await addressOf(deps, request);
      const { id, token } = request.query;
      if (id === undefined || id === '') throw validationError('id is required');
      const record = await findMailCode(deps, 'verification', id);
      const returnTo = returnToOf(request, request.query.return_to);
      const now = deps.clock.now();
      if (!prefersHtml(request)) {
        return reply
          .header('cache-control', 'no-store')
          .send(verificationView(record, returnTo, now));
      }
      const state = mailCodeViewState(record, now);
      if (state === 'expired') {
        // The page still offers a resend, which starts the code's time anew.
        const notice = 'This code has expired: send a new one.';
        return sendPage(reply, 200, verificationPage({ record, returnTo, notice }));
      }
      if (state !== 'pending') {
        const closed = new DomainError('invalid_token');
        return sendVerificationFailure(request, reply, closed, {
          record,
          formUsable: false,
          returnTo,
          now,
        });
      }
      return sendPage(reply, 200, verificationPage({ record, token, returnTo }));
    },
  );

  /** A form post's failure: the form again when the poster held the flow token, else a page. */
  async function formFailure(
    error: unknown,
    request: FastifyRequest<SubmitRoute>,
    reply: FastifyReply,
  ): Promise<FastifyReply> {
    const now = deps.clock.now();
    const id = request.params.id;
    const record = id.startsWith('mc_')
      ? await deps.store.findMailCode(id).catch(() => undefined)
      : undefined;
    const csrf = request.body?.csrf_token;
    const formUsable =
      record !== undefined &&
      isMailCodeOpen(record, now) &&
      typeof csrf === 'string' &&
      secretsEqual(record.csrf_token, csrf);
    let returnTo: string | null = null;
    try {
      returnTo = returnToOf(request, request.body?.return_to);
    } catch {
      // A refused return_to was the failure itself; the form goes on without it.
    }
    return sendVerificationFailure(request, reply, error, { record, formUsable, returnTo, now });
  }

  const postOptions = (
    action: string,
    operationId: string,
    summary: string,
    body: typeof VerificationSubmitBody | typeof VerificationResendBody,
    ok: Record<number, TSchema>,
  ) => ({
    config: { action },
    onRequest: refuseForeignOrigin((request) => flowSubmitOrigins(request, deps.config)),
    errorHandler: (error: Error, request: FastifyRequest, reply: FastifyReply) =>
      isFormPost(request)
        ? formFailure(error, request as FastifyRequest<SubmitRoute>, reply)
        : handleError(error, request, reply),
    schema: {
      operationId,
      summary,
      tags: ['flows'],
      security: OPTIONAL_SERVICE_TOKEN,
      consumes: ['application/json', 'application/x-www-form-urlencoded'],
      params: IdParams,
      headers: ClientIpHeader,
      body,
      response: responses(ok, [...BROWSER_ERRORS, 404, 409, 429], { html: true }),
    },
  });

  /** Every post counts against the client address, under the login flows' own key and rule. */
  const countSubmission = async (request: FastifyRequest) => {
    const address = await addressOf(deps, request);
    await consumeRateLimit(
      deps.store,
      deps.clock,
      `flow:ip:${addressKey(address)}`,
      deps.config.rateLimits.loginIp,
    );
  };

  app.post<SubmitRoute>(
    '/v1/verification/:id',
    postOptions(
      'verification_submit',
      'submitVerification',
      'Confirm the address with the mailed code or link token',
      VerificationSubmitBody,
      {
        200: jsonOrPage(
          VerifiedSchema,
          'Confirmed: the identity with its new address (JSON), or the confirmation page',
        ),
        303: seeOther('Confirmed (form post): on to return_to'),
      },
    ),
    async (request, reply) => {
      await countSubmission(request);
      const { code, token, csrf_token: csrfToken } = request.body ?? {};
      const returnTo = returnToOf(request, request.body?.return_to);
      const proof =
        typeof token === 'string' && token !== ''
          ? { token }
          : typeof code === 'string' && code.trim() !== ''
            ? { code }
            : undefined;
      if (!proof) throw validationError('code is required');
      const identity = await completeEmailVerification(
        verificationDeps(deps, request),
        verificationActor(request),
        { id: request.params.id, csrfToken, proof, locale: mailLocaleOf(request) },
      );
      if (!isFormPost(request)) {
        return reply.header('cache-control', 'no-store').send({ identity, return_to: returnTo });
      }
      if (returnTo) return reply.header('cache-control', 'no-store').redirect(returnTo, 303);
      return sendPage(reply, 200, verifiedPage(identity.email ?? '', returnTo));
    },
  );

  app.post<SubmitRoute>(
    '/v1/verification/:id/resend',
    postOptions(
      'verification_resend',
      'resendVerification',
      'Send a new code for a pending verification',
      VerificationResendBody,
      {
        200: jsonOrPage(
          VerificationSchema,
          'The flow with its new expiry (JSON), or the page again',
        ),
      },
    ),
    async (request, reply) => {
      await countSubmission(request);
      const returnTo = returnToOf(request, request.body?.return_to);
      const record = await resendVerification(verificationDeps(deps, request), {
        id: request.params.id,
        csrfToken: request.body?.csrf_token,
        locale: mailLocaleOf(request),
      });
      const now = deps.clock.now();
      if (!isFormPost(request)) {
        return reply
          .header('cache-control', 'no-store')
          .send(verificationView(record, returnTo, now));
      }
      const page = verificationPage({ record, returnTo, notice: 'A new code was sent.' });
      return sendPage(reply, 200, page);
    },
  );
}

/** A verification flow as JSON: the flow, its state now and its CSRF token. */
export function verificationView(record: MailCodeRecord, returnTo: string | null, now: number) {
  return {
    id: record.id,
    flow_id: record.id,
    state: mailCodeViewState(record, now),
    address: record.address,
    expires_at: toIso(record.expires_at),
    return_to: returnTo,
    csrf_token: record.csrf_token,
  };
}
