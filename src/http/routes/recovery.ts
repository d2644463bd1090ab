import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, validationError } from '../../domain/errors.js';
import { addressKey } from '../../domain/login-flows/address-key.js';
import { resolveReturnTo } from '../../domain/login-flows/return-to.js';
import { BROWSER_ACTOR } from '../../domain/login-flows/sign-in-audit.js';
import type { CodeProof } from '../../domain/mail-codes/mail-codes.js';
import {
  type AcceptedCode,
  type CompleteRecoveryDeps,
  acceptRecoveryCode,
  completeRecovery,
} from '../../domain/recovery/complete-recovery.js';
import {
  type RecoveryFlowRecord,
  recoveryViewState,
  toRecoveryView,
} from '../../domain/recovery/recovery-flow.js';
import {
  type RecoveryDeps,
  findRecoveryFlow,
  requestRecoveryMail,
  startRecoveryFlow,
} from '../../domain/recovery/request-recovery.js';
import { consumeRateLimit } from '../../domain/rate-limit/rate-limiter.js';
import { SECOND_FACTOR_METHODS, directSecondFactor } from '../../domain/sign-in/second-factors.js';
import { secretsEqual } from '../../lib/tokens.js';
import { addressOf } from '../client-address.js';
import { setSessionCookie } from '../cookies.js';
import type { AppDeps } from '../deps.js';
import { browserDevice } from '../device.js';
import { handleError } from '../errors.js';
import { isFormPost, prefersHtml, sendPage } from '../login-page/respond.js';
import { escapeHtml, layout } from '../login-page/render.js';
import { noticeOrigin } from '../notice-origin.js';
import {
  flowSubmitOrigins,
  mailLinks,
  refuseForeignOrigin,
  returnToAllowList,
} from '../origins.js';
import {
  ClientIpHeader,
  IdParams,
  StringEnum,
  Timestamp,
  jsonOrPage,
  responses,
  seeOther,
} from '../schemas.js';
import {
  RECOVERY_PATH,
  addressPage,
  codePage,
  passwordPage,
  recoveredPage,
  recoveryPaths,
} from '../recovery-page/render.js';
import { sendRecoveryFailure } from '../recovery-page/respond.js';
import { BROWSER_ERRORS, OPTIONAL_SERVICE_TOKEN, SubmitResultSchema } from '../flow-schemas.js';
import { mailLocaleOf } from './verification.js';

export const RecoveryFlowSchema = Type.Object(
  {
    id: Type.String({ description: 'The recovery flow id (rf_…)' }),
    flow_id: Type.String({ description: 'Same as id' }),
    state: StringEnum(['created', 'sent', 'completed', 'failed', 'expired']),
    address: Type.Union([Type.String(), Type.Null()], {
      description: 'The address given (canonical), null before one was',
    }),
    return_to: Type.Union([Type.String(), Type.Null()]),
    expires_at: Timestamp,
    csrf_token: Type.String({ description: 'For every POST of the flow' }),
  },
  { description: 'An account recovery flow: the same whether or not the address is known.' },
);

export const AcceptedRecoveryCodeSchema = Type.Object(
  {
    flow: RecoveryFlowSchema,
    second_factor: Type.Object({
      methods: Type.Array(StringEnum(SECOND_FACTOR_METHODS.map(({ id }) => id)), {
        description:
          'What POST /v1/recovery/{id} needs beside the new password: one of these (totp_code or recovery_code); empty when the account has no second factor',
      }),
    }),
  },
  { description: 'The code is right: set a new password with it.' },
);

const RecoveryQuery = Type.Object({
  flow: Type.Optional(
    Type.String({ description: 'An existing flow (rf_…), e.g. from the mail’s link' }),
  ),
  token: Type.Optional(Type.String({ description: 'From the mail’s link' })),
  return_to: Type.Optional(Type.String()),
});
const Csrf = {
  csrf_token: Type.Optional(Type.String({ description: 'From GET /v1/recovery: the flow’s' })),
};
const Proof = {
  code: Type.Optional(Type.String({ description: 'The code from the mail' })),
  token: Type.Optional(Type.String({ description: 'Or the token of the mail’s link' })),
};
export const RecoveryEmailBody = Type.Object(
  { ...Csrf, email: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
export const RecoveryResendBody = Type.Object({ ...Csrf }, { additionalProperties: false });
export const RecoveryCodeBody = Type.Object({ ...Csrf, ...Proof }, { additionalProperties: false });
export const RecoveryCompleteBody = Type.Object(
  {
    ...Csrf,
    ...Proof,
    password: Type.Optional(Type.String({ description: 'The new password (password policy)' })),
    totp_code: Type.Optional(Type.String({ description: 'When the account has a second factor' })),
    recovery_code: Type.Optional(Type.String({ description: 'Or one of its recovery codes' })),
  },
  { additionalProperties: false },
);

type Body = Partial<
  Record<
    'csrf_token' | 'email' | 'code' | 'token' | 'password' | 'totp_code' | 'recovery_code',
    string
  >
>;
type PostRoute = { Params: Static<typeof IdParams>; Body: Body };

const recoveryActor = (request: FastifyRequest) => ({
  ...BROWSER_ACTOR,
  details: { via: 'recovery', address: request.ip },
});

/** The proof a post carries: the link's token, else the typed code; 422 when neither. */
function proofOf(body: Body | undefined): CodeProof {
  if (typeof body?.token === 'string' && body.token !== '') return { token: body.token };
  if (typeof body?.code === 'string' && body.code.trim() !== '') return { code: body.code };
  throw validationError('code is required');
}

/**
 * The recovery domain's deps: the mail's link points to SERVICE_PUBLIC_URL, or, without
 * one, to the origin the request came to (as the verification mail's does).
 */
export function recoveryDeps(deps: AppDeps, request: FastifyRequest): AppDeps & RecoveryDeps {
  return { ...deps, linkTo: mailLinks(request, deps.config, RECOVERY_PATH, 'flow') };
}

/** Where a form post may land after it (CSP form-action): the flow's return_to. */
const landing = (flow: RecoveryFlowRecord) =>
  flow.return_to ? [new URL(flow.return_to).origin] : [];

/** The page a GET of a live flow shows: its step, or (from the mail's link) a Continue button. */
function stepPage(flow: RecoveryFlowRecord, token: string | undefined): string {
  if (flow.state === 'created') return addressPage({ flow });
  if (token === undefined || token === '') return codePage({ flow });
  // A GET spends nothing (a mail scanner fetching the link changes nothing): the button posts.
  return layout(
    'Recover your account',
    `<h1>Recover your account</h1>
<p>Continue to choose a new password for your account.</p>
<form method="post" action="${escapeHtml(recoveryPaths(flow.id).code)}">
<input type="hidden" name="csrf_token" value="${escapeHtml(flow.csrf_token)}">
<input type="hidden" name="token" value="${escapeHtml(token)}">
<button type="submit">Continue</button>
</form>`,
  );
}

/**
 * `GET /v1/recovery` and its posts (docs/recovery.md): a flow like the login flow's, with
 * the same Origin check, return_to allow-list and per-address submission limit, on a
 * recovery flow that answers the same for every address.
 */
export function recoveryRoutes(app: FastifyInstance, deps: AppDeps): void {
  const returnToOf = (request: FastifyRequest, raw: string | undefined): string | null =>
    raw === undefined || raw === ''
      ? null
      : resolveReturnTo(raw, returnToAllowList(request, deps.config));
  const completeDeps = (request: FastifyRequest): CompleteRecoveryDeps => ({
    ...recoveryDeps(deps, request),
    secondFactorRule: deps.secondFactorRule,
  });

  app.get<{ Querystring: Static<typeof RecoveryQuery> }>(
    RECOVERY_PATH,
    {
      exposeHeadRoute: false,
      config: { action: 'recovery_read' },
      errorHandler: (error, request, reply) =>
        prefersHtml(request)
          ? sendRecoveryFailure(request, reply, error, { now: deps.clock.now() })
          : handleError(error, request, reply),
      schema: {
        operationId: 'getRecovery',
        summary: 'An account recovery flow (or its page)',
        tags: ['flows'],
        description:
          'Without `flow`: starts a recovery flow (counted per client address like GET /v1/login). With `flow`: that flow. JSON for an operator’s own UI; a browser gets the hosted page. Changes nothing else: a mail scanner fetching the link spends no code.',
        security: OPTIONAL_SERVICE_TOKEN,
        querystring: RecoveryQuery,
        headers: ClientIpHeader,
        response: responses(
          { 200: jsonOrPage(RecoveryFlowSchema, 'The flow (JSON), or the page for a browser') },
          [...BROWSER_ERRORS, 404, 429],
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const address = await addressOf(deps, request);
      const now = deps.clock.now();
      const { flow: id, token } = request.query;
      let flow: RecoveryFlowRecord;
      if (id === undefined || id === '') {
        flow = await startRecoveryFlow(deps, {
          returnTo: returnToOf(request, request.query.return_to),
          ttlMs: deps.config.flowTtlMs,
          createKey: `flow-create:ip:${addressKey(address)}`,
          createRule: deps.config.rateLimits.flowCreateIp,
        });
      } else {
        flow = await findRecoveryFlow(deps.store, id);
      }
      if (!prefersHtml(request)) {
        return reply.header('cache-control', 'no-store').send(toRecoveryView(flow, now));
      }
      const state = recoveryViewState(flow, now);
      if (state !== 'created' && state !== 'sent') {
        return sendRecoveryFailure(request, reply, new DomainError('invalid_token'), { flow, now });
      }
      return sendPage(reply.header('cache-control', 'no-store'), 200, stepPage(flow, token));
    },
  );

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

  /** The flow a failed form post names, when the post held its CSRF token and it is live. */
  async function postedFlow(request: FastifyRequest<PostRoute>) {
    const now = deps.clock.now();
    const flow = request.params.id.startsWith('rf_')
      ? await deps.store.findRecoveryFlow(request.params.id).catch(() => undefined)
      : undefined;
    const csrf = request.body?.csrf_token;
    const usable =
      flow !== undefined &&
      (flow.state === 'created' || flow.state === 'sent') &&
      flow.expires_at > now &&
      typeof csrf === 'string' &&
      secretsEqual(flow.csrf_token, csrf);
    return { flow, usable, now };
  }

  const post = (
    path: string,
    operationId: string,
    summary: string,
    body: TSchema,
    ok: Record<number, TSchema>,
    /** The page to show again after a form post's failure, when the flow is still usable. */
    form: (flow: RecoveryFlowRecord, request: FastifyRequest<PostRoute>, message: string) => string,
    handler: (request: FastifyRequest<PostRoute>, reply: FastifyReply) => Promise<FastifyReply>,
  ) =>
    app.post<PostRoute>(
      path,
      {
        config: { action: operationId },
        onRequest: refuseForeignOrigin((request) => flowSubmitOrigins(request, deps.config)),
        errorHandler: async (error, request, reply) => {
          if (!isFormPost(request)) return handleError(error, request, reply);
          const { flow, usable, now } = await postedFlow(request);
          return sendRecoveryFailure(request, reply, error, {
            ...(flow ? { flow, landing: landing(flow) } : {}),
            now,
            ...(usable && flow ? { form: (message: string) => form(flow, request, message) } : {}),
          });
        },
        schema: {
          operationId,
          summary,
          tags: ['flows'],
          security: OPTIONAL_SERVICE_TOKEN,
          consumes: ['application/json', 'application/x-www-form-urlencoded'],
          params: IdParams,
          headers: ClientIpHeader,
          body,
          response: responses(ok, [...BROWSER_ERRORS, 404, 429], { html: true }),
        },
      },
      async (request, reply) => {
        await countSubmission(request);
        return handler(request, reply);
      },
    );

  const sendFlow = (
    request: FastifyRequest,
    reply: FastifyReply,
    flow: RecoveryFlowRecord,
    notice?: string,
  ) =>
    isFormPost(request)
      ? sendPage(reply, 200, codePage({ flow, ...(notice ? { notice } : {}) }))
      : reply.header('cache-control', 'no-store').send(toRecoveryView(flow, deps.clock.now()));

  const flowAnswer = {
    200: jsonOrPage(RecoveryFlowSchema, 'The flow, now `sent` (JSON), or the code page'),
  };

  post(
    '/v1/recovery/:id/email',
    'submitRecoveryEmail',
    'Give the address: a code is mailed if it is an account’s verified address',
    RecoveryEmailBody,
    flowAnswer,
    (flow, _request, error) =>
      flow.state === 'created' ? addressPage({ flow, error }) : codePage({ flow, error }),
    async (request, reply) => {
      const flow = await requestRecoveryMail(recoveryDeps(deps, request), recoveryActor(request), {
        flowId: request.params.id,
        csrfToken: request.body?.csrf_token,
        email: request.body?.email ?? '',
        locale: mailLocaleOf(request),
      });
      return sendFlow(request, reply, flow);
    },
  );

  post(
    '/v1/recovery/:id/resend',
    'resendRecovery',
    'Mail a new code to the address given (the earlier code stops working)',
    RecoveryResendBody,
    flowAnswer,
    (flow, _request, error) => codePage({ flow, error }),
    async (request, reply) => {
      const flow = await requestRecoveryMail(recoveryDeps(deps, request), recoveryActor(request), {
        flowId: request.params.id,
        csrfToken: request.body?.csrf_token,
        email: null,
        locale: mailLocaleOf(request),
      });
      return sendFlow(request, reply, flow, 'A new code is on its way.');
    },
  );

  post(
    '/v1/recovery/:id/code',
    'checkRecoveryCode',
    'Check the mailed code (or the link’s token) before choosing a new password; spends nothing',
    RecoveryCodeBody,
    {
      200: jsonOrPage(
        AcceptedRecoveryCodeSchema,
        'The code is right, and what else the new password needs (JSON); or the new-password page',
      ),
    },
    (flow, _request, error) => codePage({ flow, error }),
    async (request, reply) => {
      const proof = proofOf(request.body);
      const accepted = await acceptRecoveryCode(deps, {
        flowId: request.params.id,
        csrfToken: request.body?.csrf_token,
        proof,
      });
      if (isFormPost(request)) {
        const page = passwordPage({
          flow: accepted.flow,
          proof,
          secondFactors: accepted.secondFactors,
        });
        return sendPage(
          reply.header('cache-control', 'no-store'),
          200,
          page,
          landing(accepted.flow),
        );
      }
      return reply.header('cache-control', 'no-store').send({
        flow: toRecoveryView(accepted.flow, deps.clock.now()),
        second_factor: { methods: accepted.secondFactors },
      });
    },
  );

  const notes: WeakMap<FastifyRequest, { accepted?: AcceptedCode }> = new WeakMap();
  post(
    '/v1/recovery/:id',
    'completeRecovery',
    'Set a new password with the mailed code (and the second factor, if the account has one), and sign in',
    RecoveryCompleteBody,
    {
      200: jsonOrPage(
        SubmitResultSchema,
        'Password set and signed in, the session in the cookie (JSON: the session), or the page saying so',
      ),
      303: seeOther('Password set and signed in (form post): on to return_to'),
    },
    (flow, request, error) => {
      const accepted = notes.get(request)?.accepted;
      let proof: CodeProof | undefined;
      try {
        proof = proofOf(request.body);
      } catch {
        proof = undefined;
      }
      // Only once the code was accepted is the password step shown again (with its second
      // factor, if any): before that, the code page, which says nothing about the account.
      return accepted && proof
        ? passwordPage({ flow, proof, secondFactors: accepted.secondFactors, error })
        : codePage({ flow, error });
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const proof = proofOf(body);
      const requestNotes: { accepted?: AcceptedCode } = {};
      notes.set(request, requestNotes);
      const address = await addressOf(deps, request);
      const secondFactor = directSecondFactor({
        ...(body.totp_code ? { totp_code: body.totp_code } : {}),
        ...(body.recovery_code ? { recovery_code: body.recovery_code } : {}),
      });
      const { flow, minted } = await completeRecovery(
        completeDeps(request),
        recoveryActor(request),
        {
          flowId: request.params.id,
          csrfToken: body.csrf_token,
          proof,
          password: body.password ?? '',
          secondFactor,
          device: browserDevice(request, address),
          origin: noticeOrigin(request),
          notes: requestNotes,
        },
      );
      setSessionCookie(reply, minted.token, {
        cookieDomain: deps.config.cookieDomain,
        sessionTtlMs: deps.sessionTtlMs,
      });
      reply.header('cache-control', 'no-store');
      if (!isFormPost(request))
        return reply.send({ session: minted.session, return_to: flow.return_to });
      if (flow.return_to) return reply.redirect(flow.return_to, 303);
      return sendPage(reply, 200, recoveredPage(flow.return_to));
    },
  );
}
