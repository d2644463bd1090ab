import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { startFlow } from '../../domain/login-flows/flow-service.js';
import { type FlowRecord, flowViewState, isFlowOpen } from '../../domain/login-flows/flow.js';
import { BROWSER_ACTOR } from '../../domain/login-flows/sign-in-audit.js';
import {
  type RegistrationDeps,
  type SignUpSubmission,
  passkeySignUpOptions,
  signUpWithPasskey,
  signUpWithPassword,
} from '../../domain/registration/sign-up.js';
import { toIso } from '../../lib/clock.js';
import { isWellFormedToken, secretsEqual } from '../../lib/tokens.js';
import { addressOf, countChallengeRequest } from '../client-address.js';
import type { AppDeps } from '../deps.js';
import { browserDevice } from '../device.js';
import { handleError } from '../errors.js';
import { isFormPost, landingOrigins, prefersHtml, sendPage } from '../login-page/respond.js';
import { flowSubmitOrigins, refuseForeignOrigin, returnToAllowList } from '../origins.js';
import {
  REGISTRATION_PATH,
  registrationPage,
  registrationSubmitPath,
} from '../registration-page/render.js';
import { sendSignUpFailure, sendSignedUp } from '../registration-page/respond.js';
import { flowPage } from '../relying-party.js';
import {
  ClientIpHeader,
  IdParams,
  IdentitySchema,
  SessionSchema,
  StringEnum,
  Timestamp,
  jsonOrPage,
  responses,
  seeOther,
} from '../schemas.js';
import { BROWSER_ERRORS, ChallengeOptionsSchema, OPTIONAL_SERVICE_TOKEN } from '../flow-schemas.js';
import { flowDepsOf } from '../flow-routes.js';
import { VerificationSchema, mailLocaleOf, verificationDeps } from './verification.js';

export const RegistrationFlowSchema = Type.Object(
  {
    id: Type.String({ description: 'Flow id (tess_f_…)' }),
    flow_id: Type.String({ description: 'Same as id' }),
    csrf_token: Type.String({ description: 'For the submissions; body only' }),
    return_to: Type.Union([Type.String(), Type.Null()]),
    state: StringEnum(['created', 'completed', 'failed', 'expired']),
    issued_at: Timestamp,
    expires_at: Timestamp,
    email: StringEnum(['optional', 'required'], {
      description: 'Whether a sign-up must give an email address (SERVICE_REGISTRATION_EMAIL)',
    }),
  },
  { description: 'A new registration flow and the CSRF token its submissions need.' },
);

const ProfileFields = {
  csrf_token: Type.Optional(Type.String({ description: 'From GET /v1/registration; body only' })),
  username: Type.Optional(Type.String()),
  display_name: Type.Optional(Type.String({ description: 'Default: the username' })),
  email: Type.Optional(
    Type.String({ description: 'Required unless SERVICE_REGISTRATION_EMAIL=optional' }),
  ),
};
export const PasswordSignUpBody = Type.Object(
  { ...ProfileFields, password: Type.Optional(Type.String()) },
  { additionalProperties: false },
);
export const PasskeySignUpOptionsBody = Type.Object(ProfileFields, {
  additionalProperties: false,
});
export const PasskeySignUpBody = Type.Object(
  {
    ...ProfileFields,
    credential: Type.Optional(
      Type.Unknown({
        description:
          "The browser's registration response as JSON (PublicKeyCredential.toJSON(), or @simplewebauthn/browser's startRegistration result) for the flow's current challenge",
      }),
    ),
  },
  { additionalProperties: false },
);
export const SignUpResultSchema = Type.Object(
  {
    identity: IdentitySchema,
    session: Type.Union([SessionSchema, Type.Null()], {
      description:
        'The new session (the service_session cookie is set); null with SERVICE_REGISTRATION_EMAIL=verified: the address is verified first, then the user signs in',
    }),
    return_to: Type.Union([Type.String(), Type.Null()]),
    verification: Type.Union([VerificationSchema, Type.Null()], {
      description: 'The verification of the address the mail was sent to; null without one',
    }),
  },
  { description: 'A completed sign-up.' },
);

const RegistrationQuery = Type.Object({ return_to: Type.Optional(Type.String()) });
type SubmitRoute = {
  Params: Static<typeof IdParams>;
  Body: Static<typeof PasskeySignUpBody> & { password?: string };
};

/** Statuses a submission adds to every browser endpoint's. */
const SUBMIT_ERRORS = [...BROWSER_ERRORS, 404, 409, 429];

/**
 * `GET /v1/registration` and its submissions (docs/registration.md): a flow of the login
 * flows' own kind and machinery (flow-service.ts), with the same Origin check, CSRF,
 * return_to allow-list, attempt cap and per-address limits. With SERVICE_REGISTRATION
 * closed every route answers as an unknown one (404 `not_found`), as before it existed.
 */
export function registrationRoutes(app: FastifyInstance, deps: AppDeps): void {
  const { registration } = deps.config;
  const emailRequired = registration.email !== 'optional';
  const flowDeps = flowDepsOf(deps);
  const providers = [...deps.providers.values()];
  const onlyWhenOpen = async (_request: FastifyRequest, reply: FastifyReply) => {
    if (!registration.open) return reply.callNotFound();
  };
  const registrationDeps = (request: FastifyRequest): RegistrationDeps => ({
    ...verificationDeps(deps, request),
    flows: flowDeps.flows,
    registrationEmail: registration.email,
  });

  app.get<{ Querystring: Static<typeof RegistrationQuery> }>(
    REGISTRATION_PATH,
    {
      // HEAD must not create flows (nor spend the caller's rate limit).
      exposeHeadRoute: false,
      config: { action: 'registration_create' },
      onRequest: onlyWhenOpen,
      errorHandler: (error, request, reply) =>
        prefersHtml(request)
          ? sendSignUpFailure(request, reply, error, {
              formUsable: false,
              emailRequired,
              now: deps.clock.now(),
            })
          : handleError(error, request, reply),
      schema: {
        operationId: 'startRegistration',
        summary: 'Start a registration flow (or show the sign-up page)',
        tags: ['flows'],
        description:
          'Only with SERVICE_REGISTRATION=open (else 404 not_found). JSON for an operator’s own sign-up UI; a browser asking for HTML gets the hosted sign-up page. Counted per client address with GET /v1/login (SERVICE_RATE_LIMIT_FLOW_CREATE_IP).',
        security: OPTIONAL_SERVICE_TOKEN,
        querystring: RegistrationQuery,
        headers: ClientIpHeader,
        response: responses(
          {
            200: jsonOrPage(
              RegistrationFlowSchema,
              'The new flow (JSON), or the sign-up page for a browser',
            ),
          },
          [...BROWSER_ERRORS, 404, 429],
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const flow = await startFlow(flowDeps, {
        returnTo: request.query.return_to,
        address: await addressOf(deps, request),
        allowList: returnToAllowList(request, deps.config),
        kind: 'registration',
      });
      if (!prefersHtml(request)) {
        return reply.header('cache-control', 'no-store').send(registrationView(flow));
      }
      const page = registrationPage({ flow, emailRequired, providers });
      return sendPage(reply, 200, page, landingOrigins(flow));
    },
  );

  function registrationView(flow: FlowRecord) {
    return {
      id: flow.id,
      flow_id: flow.id,
      csrf_token: flow.csrf_token,
      return_to: flow.return_to,
      state: flowViewState(flow, deps.clock.now()),
      issued_at: toIso(flow.issued_at),
      expires_at: toIso(flow.expires_at),
      email: emailRequired ? 'required' : 'optional',
    };
  }

  /** A form post's failure: the form again when the poster held the flow's token, else a page. */
  async function formFailure(
    error: unknown,
    request: FastifyRequest<SubmitRoute>,
    reply: FastifyReply,
  ): Promise<FastifyReply> {
    const now = deps.clock.now();
    const id = request.params.id;
    const found = deps.legacyTokens.accepts('flow', id)
      ? await deps.store.findFlow(id).catch(() => undefined)
      : undefined;
    const flow = found?.kind === 'registration' ? found : undefined;
    const body = request.body ?? {};
    const csrf = body.csrf_token;
    const formUsable =
      flow !== undefined &&
      isFlowOpen(flow, now) &&
      typeof csrf === 'string' &&
      secretsEqual(flow.csrf_token, csrf);
    const values = { username: body.username, display_name: body.display_name, email: body.email };
    return sendSignUpFailure(request, reply, error, {
      flow,
      formUsable,
      emailRequired,
      values,
      providers,
      now,
    });
  }

  /**
   * A refused submission's audit row (action `identity_register`, outcome its code), written
   * once the answer has gone out; a successful one is written with the identity instead.
   */
  const auditRefusal = async (request: FastifyRequest<SubmitRoute>, reply: FastifyReply) => {
    // A path that cannot name a flow is no sign-up attempt: no row (as for login flows).
    if (reply.statusCode < 400 || !registration.open) return;
    if (!isWellFormedToken('flow', request.params.id)) return;
    deps.audit.enqueue(BROWSER_ACTOR, {
      action: 'identity_register',
      outcome: request.errorCode ?? String(reply.statusCode),
      details: { via: 'registration', flow_id: request.params.id, address: request.ip },
    });
  };

  const postOptions = (
    action: string,
    operationId: string,
    summary: string,
    description: string,
    body: TSchema,
    ok: Record<number, TSchema>,
  ) => ({
    config: { action },
    onRequest: [
      onlyWhenOpen,
      refuseForeignOrigin((request) => flowSubmitOrigins(request, deps.config)),
    ],
    onResponse: auditRefusal,
    errorHandler: (error: Error, request: FastifyRequest, reply: FastifyReply) =>
      isFormPost(request)
        ? formFailure(error, request as FastifyRequest<SubmitRoute>, reply)
        : handleError(error, request, reply),
    schema: {
      operationId,
      summary,
      tags: ['flows'],
      description,
      security: OPTIONAL_SERVICE_TOKEN,
      consumes: ['application/json', 'application/x-www-form-urlencoded'],
      params: IdParams,
      headers: ClientIpHeader,
      body,
      response: responses(ok, SUBMIT_ERRORS, { html: true }),
    },
  });

  async function submissionOf(request: FastifyRequest<SubmitRoute>): Promise<SignUpSubmission> {
    const { csrf_token: csrfToken, ...fields } = request.body ?? {};
    const address = await addressOf(deps, request);
    const locale = mailLocaleOf(request);
    return {
      flowId: request.params.id,
      csrfToken,
      fields,
      address,
      device: browserDevice(request, address),
      ...(locale === undefined ? {} : { locale }),
      page: flowPage(request, deps.config),
    };
  }

  const signedUp = {
    201: jsonOrPage(
      SignUpResultSchema,
      'Signed up: the identity, its session (cookie set) and the address’s verification',
    ),
    200: jsonOrPage(SignUpResultSchema, 'Form post without return_to or address: the page'),
    303: seeOther('Form post: on to the verification page, or to return_to'),
  };

  app.post<SubmitRoute>(
    `${REGISTRATION_PATH}/:id/password`,
    postOptions(
      'registration_password',
      'submitRegistrationPassword',
      'Sign up with a username and password',
      'The password policy applies (docs/password-policy.md). A taken username is 409 username_taken, a taken address 409 email_taken, both recorded on the flow and counted to its attempt cap. JSON or an HTML form post.',
      PasswordSignUpBody,
      signedUp,
    ),
    async (request, reply) => {
      const result = await signUpWithPassword(
        registrationDeps(request),
        await submissionOf(request),
      );
      return sendSignedUp(deps, request, reply, result);
    },
  );

  app.post<SubmitRoute>(
    `${REGISTRATION_PATH}/:id/passkey/options`,
    {
      ...postOptions(
        'registration_passkey_options',
        'challengeRegistrationPasskey',
        'Passkey creation options for a sign-up',
        'Checks the profile fields (a taken username or address is refused here already) and answers the PublicKeyCredentialCreationOptions JSON for the identity the flow will create; the challenge is bound to the flow (a new request replaces it). Counted per client address (SERVICE_RATE_LIMIT_CHALLENGE_IP).',
        PasskeySignUpOptionsBody,
        { 200: ChallengeOptionsSchema },
      ),
      errorHandler: handleError,
    },
    async (request, reply) => {
      await countChallengeRequest(deps, request);
      const submission = await submissionOf(request);
      const options = await passkeySignUpOptions(registrationDeps(request), submission);
      return reply.header('cache-control', 'no-store').send({ options });
    },
  );

  app.post<SubmitRoute>(
    `${REGISTRATION_PATH}/:id/passkey`,
    {
      ...postOptions(
        'registration_passkey',
        'submitRegistrationPasskey',
        'Sign up with a passkey instead of a password',
        'The registration response for the challenge of POST /v1/registration/{id}/passkey/options; the identity has no password. The session is a passkey’s (aal2). JSON only.',
        PasskeySignUpBody,
        { 201: signedUp[201] },
      ),
      errorHandler: handleError,
    },
    async (request, reply) => {
      const result = await signUpWithPasskey(
        registrationDeps(request),
        await submissionOf(request),
      );
      return sendSignedUp(deps, request, reply, result);
    },
  );
}

/** The routes' URLs, for the credentials CORS zone (cors.ts) when sign-up is open. */
export const REGISTRATION_URLS = [
  REGISTRATION_PATH,
  registrationSubmitPath(':id', 'password'),
  `${registrationSubmitPath(':id', 'passkey')}/options`,
  registrationSubmitPath(':id', 'passkey'),
  // The sign-up page's provider buttons (routes/providers.ts).
  `${REGISTRATION_PATH}/:id/provider`,
];
