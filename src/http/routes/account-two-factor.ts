import { noticeOrigin } from '../notice-origin.js';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import { needsStepUp } from '../../domain/account/credential-change.js';
import { DomainError } from '../../domain/errors.js';
import {
  type SecondFactorStatus,
  confirmTotpEnrolment,
  regenerateRecoveryCodes,
  removeSecondFactor,
  requireActive,
  secondFactorStatus,
  startTotpEnrolment,
} from '../../domain/second-factor/enrolment.js';
import type { Session } from '../../domain/sessions/session.js';
import type { IdentityRecord } from '../../domain/identities/identity.js';
import { toIso } from '../../lib/clock.js';
import {
  accountActor,
  accountChangeHooks,
  accountCsrfToken,
  requireAccountSession,
} from '../account-session.js';
import {
  type TwoFactorPageInput,
  signInFirstPage,
  twoFactorPage,
} from '../account-pages/two-factor-page.js';
import type { AppDeps } from '../deps.js';
import { ERROR_STATUS, handleError, refusalOf } from '../errors.js';
import { formMessage, isFormPost, prefersHtml, sendPage } from '../login-page/respond.js';
import { ownOrigins } from '../origins.js';
import { Timestamp, jsonOrPage, responses } from '../schemas.js';

export const TwoFactorStatusSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: 'A confirmed authenticator: sign-ins need a code' }),
    pending: Type.Boolean({ description: 'An enrolment started and not confirmed' }),
    methods: Type.Array(Type.String(), { description: 'The second factors enrolled: totp' }),
    since: Type.Union([Timestamp, Type.Null()]),
    recovery_codes_left: Type.Integer(),
  },
  { description: "An identity's second factor, without any secret." },
);
export const AccountStatusSchema = Type.Intersect(
  [
    TwoFactorStatusSchema,
    Type.Object({
      csrf_token: Type.String({
        description: 'For the X-CSRF-Token header (or csrf_token field) of the POSTs below',
      }),
    }),
  ],
  { description: 'The signed-in user’s second factor and the CSRF token of its changes.' },
);
export const EnrolmentSchema = Type.Object(
  {
    secret: Type.String({ description: 'The base32 key, for entering by hand; shown once' }),
    otpauth_uri: Type.String({ description: 'otpauth://totp/… for an authenticator app' }),
    qr_svg: Type.String({ description: 'The URI as a QR code, an SVG document drawn by Tessera' }),
  },
  { description: 'A started TOTP enrolment: confirm it with a code.' },
);
export const RecoveryCodesSchema = Type.Object(
  {
    recovery_codes: Type.Array(Type.String(), {
      description: 'Ten single-use codes, shown only in this answer',
    }),
  },
  { description: 'Fresh recovery codes.' },
);
const CsrfBody = Type.Object(
  { csrf_token: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
export const ConfirmBody = Type.Object(
  { code: Type.String(), csrf_token: Type.Optional(Type.String()) },
  { additionalProperties: false },
);

export function toStatusView(status: SecondFactorStatus) {
  return { ...status, since: status.since === null ? null : toIso(status.since) };
}

const PAGE = '/v1/account/two-factor';
const ACCOUNT_ERRORS = [401, 403, 422, 429, 503, 504];

/**
 * The signed-in user's own second factor: the hosted page (`GET /v1/account/two-factor`,
 * plain forms, no script) and the same actions as JSON for an operator's own account UI.
 * Every change is a credential change (accountChangeHooks: Origin, session, CSRF token, a
 * recent sign-in with the identity's strongest factor) and is audited as the browser user
 * (docs/two-factor.md).
 */
export function accountTwoFactorRoutes(app: FastifyInstance, deps: AppDeps): void {
  const issuer = deps.config.totpIssuer;

  function signInAgainUrl(request: FastifyRequest): string {
    const origin =
      ownOrigins(request, deps.config).find((o) => o.startsWith(request.protocol)) ??
      ownOrigins(request, deps.config)[0] ??
      '';
    return `/v1/login?return_to=${encodeURIComponent(`${origin}${PAGE}`)}`;
  }

  async function identityOf(session: Session): Promise<IdentityRecord> {
    const identity = await deps.store.findIdentityById(session.identity.id);
    if (!identity) throw new DomainError('invalid_token');
    requireActive(identity);
    return identity;
  }

  async function page(
    request: FastifyRequest,
    reply: FastifyReply,
    code: number,
    session: Session,
    extra: Partial<TwoFactorPageInput> = {},
  ): Promise<FastifyReply> {
    const [status, stepUp] = await Promise.all([
      secondFactorStatus(deps.store, session.identity.id),
      needsStepUp(deps.store, session),
    ]);
    const html = twoFactorPage({
      status,
      csrfToken: accountCsrfToken(deps, session),
      ...(stepUp ? { stepUpUrl: signInAgainUrl(request) } : {}),
      ...extra,
    });
    return sendPage(reply, code, html);
  }

  /** A form post's failure: the page with the error, or "sign in first" without a session. */
  async function formFailure(error: unknown, request: FastifyRequest, reply: FastifyReply) {
    const refusal = refusalOf(error);
    if (!refusal) return handleError(error, request, reply);
    request.errorCode = refusal.code;
    const session = await requireAccountSession(deps, request).catch(() => null);
    if (!session)
      return sendPage(reply, ERROR_STATUS[refusal.code], signInFirstPage(signInAgainUrl(request)));
    // A refusal for want of the second factor needs no link here: page() puts its
    // step-up prompt in place of the forms.
    const signInAgain = refusal.reason === 'recent_sign_in_required';
    const message =
      refusal.code === 'validation_error' || refusal.code === 'forbidden'
        ? refusal.message.charAt(0).toUpperCase() + refusal.message.slice(1)
        : formMessage(refusal);
    return page(request, reply, ERROR_STATUS[refusal.code], session, {
      error: message.endsWith('.') ? message : `${message}.`,
      ...(signInAgain ? { signInAgainUrl: signInAgainUrl(request) } : {}),
    });
  }

  /** The session and identity of a change, which the route's hooks already authorized. */
  async function authorizedChange(request: FastifyRequest) {
    const session = await requireAccountSession(deps, request);
    return { session, identity: await identityOf(session) };
  }

  const changeOptions = (
    operationId: string,
    summary: string,
    description: string,
    ok: Parameters<typeof jsonOrPage>[0],
    body: typeof CsrfBody | typeof ConfirmBody = CsrfBody,
  ) => ({
    ...accountChangeHooks(deps, { credential: true }),
    errorHandler: (error: unknown, request: FastifyRequest, reply: FastifyReply) =>
      isFormPost(request)
        ? formFailure(error, request, reply)
        : handleError(error as Error, request, reply),
    schema: {
      operationId,
      summary,
      description: `${description} Needs the session (checked first: 401 without one, whatever the body), the account CSRF token (X-CSRF-Token header or csrf_token field), an allowed Origin and a sign-in within SERVICE_PRIVILEGED_WINDOW_MINUTES; for an identity with a second factor or a passkey, an aal2 session (403 forbidden otherwise: sign in again with it). A form post gets the hosted page.`,
      tags: ['account'],
      security: [{ sessionCookie: [] }],
      consumes: ['application/json', 'application/x-www-form-urlencoded'],
      body,
      response: responses({ 200: jsonOrPage(ok, summary) }, ACCOUNT_ERRORS, { html: true }),
    },
  });

  app.get(
    PAGE,
    {
      errorHandler: (error, request, reply) =>
        prefersHtml(request)
          ? formFailure(error, request, reply)
          : handleError(error, request, reply),
      schema: {
        operationId: 'getAccountTwoFactor',
        summary: 'The signed-in user’s two-step verification (page or JSON)',
        description:
          'A browser asking for HTML gets the hosted page; any other client the status as JSON, with the CSRF token its changes need.',
        tags: ['account'],
        security: [{ sessionCookie: [] }],
        response: responses(
          { 200: jsonOrPage(AccountStatusSchema, 'The status, or the hosted page') },
          [401, 403, 503, 504],
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const session = await requireAccountSession(deps, request);
      await identityOf(session);
      if (prefersHtml(request)) return page(request, reply, 200, session);
      const status = await secondFactorStatus(deps.store, session.identity.id);
      return reply
        .header('cache-control', 'no-store')
        .send({ ...toStatusView(status), csrf_token: accountCsrfToken(deps, session) });
    },
  );

  app.post(
    `${PAGE}/totp`,
    changeOptions(
      'startTotpEnrolment',
      'Start setting up an authenticator app',
      'Makes a new TOTP key (sealed at rest), pending until confirmed with a code; an enrolment already on must be turned off first (422).',
      EnrolmentSchema,
    ),
    async (request, reply) => {
      const { session, identity } = await authorizedChange(request);
      const enrolment = await startTotpEnrolment(deps, accountActor(request), identity, issuer);
      const qrSvg = await QRCode.toString(enrolment.otpauth_uri, {
        type: 'svg',
        errorCorrectionLevel: 'M',
        margin: 2,
      });
      if (isFormPost(request)) {
        return page(request, reply, 200, session, {
          enrolment: { secret: enrolment.secret, otpauthUri: enrolment.otpauth_uri, qrSvg },
        });
      }
      return reply.header('cache-control', 'no-store').send({ ...enrolment, qr_svg: qrSvg });
    },
  );

  app.post<{ Body: { code: string } }>(
    `${PAGE}/totp/confirm`,
    changeOptions(
      'confirmTotpEnrolment',
      'Confirm the authenticator app with a code',
      'Turns two-step verification on and answers the ten recovery codes, shown only here. A wrong code is 422; every attempt counts to SERVICE_RATE_LIMIT_SECOND_FACTOR.',
      RecoveryCodesSchema,
      ConfirmBody,
    ),
    async (request, reply) => {
      const { session, identity } = await authorizedChange(request);
      const codes = await confirmTotpEnrolment(
        deps,
        accountActor(request),
        identity,
        request.body.code,
      );
      if (isFormPost(request)) return page(request, reply, 200, session, { recoveryCodes: codes });
      return reply.header('cache-control', 'no-store').send({ recovery_codes: codes });
    },
  );

  app.post(
    `${PAGE}/recovery-codes`,
    changeOptions(
      'regenerateRecoveryCodes',
      'Replace the recovery codes',
      'Ten new codes, shown only in this answer; the previous ones stop working.',
      RecoveryCodesSchema,
    ),
    async (request, reply) => {
      const { session, identity } = await authorizedChange(request);
      const codes = await regenerateRecoveryCodes(deps, accountActor(request), identity.id);
      if (isFormPost(request)) return page(request, reply, 200, session, { recoveryCodes: codes });
      return reply.header('cache-control', 'no-store').send({ recovery_codes: codes });
    },
  );

  app.post(
    `${PAGE}/disable`,
    changeOptions(
      'disableTwoFactor',
      'Turn two-step verification off',
      'Removes the authenticator (or a pending enrolment) and every recovery code. Answers the new status.',
      TwoFactorStatusSchema,
    ),
    async (request, reply) => {
      const { session, identity } = await authorizedChange(request);
      const wasOn = await removeSecondFactor(
        deps,
        accountActor(request),
        identity.id,
        'second_factor_disable',
        noticeOrigin(request),
      );
      if (isFormPost(request)) {
        return page(request, reply, 200, session, {
          notice: wasOn ? 'Two-step verification is now off.' : 'The setup was cancelled.',
        });
      }
      return toStatusView(await secondFactorStatus(deps.store, identity.id));
    },
  );
}
