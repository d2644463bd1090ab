import { noticeOrigin } from '../notice-origin.js';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  deletePasskey,
  finishPasskeyRegistration,
  listOwnPasskeys,
  renamePasskey,
  startPasskeyRegistration,
} from '../../domain/passkeys/passkey-service.js';
import { needsStepUp } from '../../domain/account/credential-change.js';
import { isRecentSignIn } from '../../domain/sessions/recent-sign-in.js';
import type { Session } from '../../domain/sessions/session.js';
import {
  ACCOUNT_CSRF_HEADER,
  accountActor,
  accountChangeHooks,
  accountCsrfToken,
  requireAccountSession,
} from '../account-session.js';
import { passkeysPage } from '../account-page/passkeys-page.js';
import type { AppDeps } from '../deps.js';
import { ERROR_STATUS, handleError, refusalOf, toDomainError } from '../errors.js';
import { messagePage } from '../login-page/render.js';
import { prefersHtml, sendPage } from '../login-page/respond.js';
import { requestRelyingParty } from '../relying-party.js';
import { NoContent, Timestamp, StringEnum, jsonOrPage, responses, seeOther } from '../schemas.js';
import { ChallengeOptionsSchema } from '../flow-schemas.js';

export const PasskeySchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    identity_id: Type.String({ format: 'uuid' }),
    name: Type.String(),
    device_type: StringEnum(['single_device', 'multi_device'], {
      description: 'multi_device: the credential can be synced to other devices',
    }),
    backed_up: Type.Boolean({ description: 'The authenticator reports it backed up (synced)' }),
    transports: Type.Array(Type.String()),
    created_at: Timestamp,
    last_used_at: Type.Union([Timestamp, Type.Null()]),
  },
  { description: 'A passkey (WebAuthn credential) of an identity; no key material.' },
);

const CsrfField = {
  csrf_token: Type.Optional(
    Type.String({ description: 'The account CSRF token, if not sent as X-CSRF-Token' }),
  ),
};
const OptionsBody = Type.Object(CsrfField, { additionalProperties: false });
const RegisterBody = Type.Object(
  {
    credential: Type.Unknown({
      description:
        "The browser's registration response as JSON (PublicKeyCredential.toJSON(), or @simplewebauthn/browser's startRegistration result)",
    }),
    name: Type.Optional(Type.String({ description: '1-64 characters; default: the date added' })),
    ...CsrfField,
  },
  { additionalProperties: false },
);
const RenameBody = Type.Object(
  { name: Type.String({ description: '1-64 characters' }), ...CsrfField },
  { additionalProperties: false },
);
const PasskeyParams = Type.Object({ id: Type.String() });

/** Statuses every account endpoint can answer: no session, a foreign Origin or CSRF, the stores. */
const ACCOUNT_ERRORS = [401, 403, 422, 503, 504];
const COOKIE = [{ sessionCookie: [] }];

/** This page's own URL, for the hosted login to come back to. */
function selfUrl(deps: AppDeps, request: FastifyRequest): string {
  const origin = deps.config.publicUrl ?? `${request.protocol}://${request.host}`;
  return `${origin}/v1/account/passkeys`;
}

function loginUrl(deps: AppDeps, request: FastifyRequest): string {
  return `/v1/login?return_to=${encodeURIComponent(selfUrl(deps, request))}`;
}

/**
 * The signed-in user's passkeys (docs/passkeys.md): the hosted page and the JSON endpoints
 * behind it, which an operator's own UI can call the same way (cookie, `X-CSRF-Token`,
 * an allowed Origin). Adding and removing are credential changes (a recent sign-in with the
 * identity's strongest factor); renaming is not.
 */
export function accountPasskeyRoutes(app: FastifyInstance, deps: AppDeps): void {
  const credentialChange = accountChangeHooks(deps, { credential: true });
  const otherChange = accountChangeHooks(deps, { credential: false });
  const challengeTtlMs = deps.config.flowTtlMs;

  app.get(
    '/v1/account/passkeys',
    {
      errorHandler: (error, request, reply) => pageOrJsonError(error, request, reply),
      schema: {
        operationId: 'listOwnPasskeys',
        summary: "The signed-in user's passkeys (or the passkeys page)",
        tags: ['account'],
        description:
          'JSON: the passkeys of the session in the cookie, oldest first, with the account CSRF token in the X-CSRF-Token response header. A browser asking for HTML gets the hosted page; without a session, a 303 to the hosted login and back.',
        security: COOKIE,
        response: responses(
          {
            200: jsonOrPage(Type.Array(PasskeySchema), 'The passkeys (JSON), or the page'),
            303: seeOther('No session (browser): to the hosted login, returning here'),
          },
          [401, 403, 503, 504],
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const html = prefersHtml(request);
      let session: Session;
      try {
        session = await requireAccountSession(deps, request);
      } catch (error) {
        const code = toDomainError(error).code;
        if (html && (code === 'invalid_token' || code === 'session_expired')) {
          return reply.header('cache-control', 'no-store').redirect(loginUrl(deps, request), 303);
        }
        throw error;
      }
      const passkeys = await listOwnPasskeys(deps.store, session.identity.id);
      if (!html) {
        // The token a JSON client's changes need: an account UI of the operator's own, served
        // from this origin, reads it here (no other origin can read this answer).
        return reply
          .header('cache-control', 'no-store')
          .header(ACCOUNT_CSRF_HEADER, accountCsrfToken(deps, session))
          .send(passkeys);
      }
      const stepUp = await needsStepUp(deps.store, session);
      const page = passkeysPage({
        session,
        passkeys,
        csrfToken: accountCsrfToken(deps, session),
        recent: isRecentSignIn(
          Date.parse(session.issued_at),
          deps.clock.now(),
          deps.config.privilegedWindowMs,
        ),
        stepUp,
        reauthUrl: loginUrl(deps, request),
      });
      return sendPage(reply, 200, page);
    },
  );

  app.post<{ Body: Static<typeof OptionsBody> | undefined }>(
    '/v1/account/passkeys/options',
    {
      ...credentialChange,
      schema: {
        operationId: 'startPasskeyRegistration',
        summary: 'Passkey creation options for the signed-in user',
        tags: ['account'],
        description:
          'Issues a registration challenge bound to the session (single use; a new request replaces it; expires after SERVICE_FLOW_TTL_MINUTES or with the session) and answers the PublicKeyCredentialCreationOptions JSON: discoverable credential and user verification required, existing passkeys excluded. Needs the CSRF token and a recent sign-in; for an identity with a second factor or a passkey, an aal2 session (403 forbidden otherwise).',
        security: COOKIE,
        body: OptionsBody,
        response: responses({ 200: ChallengeOptionsSchema }, ACCOUNT_ERRORS),
      },
    },
    async (request, reply) => {
      const session = await requireAccountSession(deps, request);
      const options = await startPasskeyRegistration(
        { ...deps, challengeTtlMs },
        session,
        requestRelyingParty(deps, request),
      );
      return reply.header('cache-control', 'no-store').send({ options });
    },
  );

  app.post<{ Body: Static<typeof RegisterBody> }>(
    '/v1/account/passkeys',
    {
      ...credentialChange,
      schema: {
        operationId: 'addPasskey',
        summary: 'Verify and store a new passkey',
        tags: ['account'],
        description:
          "Verifies the browser's registration response against the session's challenge (which it uses up) and stores the passkey, audited (passkey_add). Needs the CSRF token and a recent sign-in; for an identity with a second factor or a passkey, an aal2 session (403 forbidden otherwise).",
        security: COOKIE,
        body: RegisterBody,
        response: responses({ 201: PasskeySchema }, ACCOUNT_ERRORS),
      },
    },
    async (request, reply) => {
      const session = await requireAccountSession(deps, request);
      const passkey = await finishPasskeyRegistration(
        { ...deps, challengeTtlMs },
        accountActor(request),
        session,
        requestRelyingParty(deps, request),
        request.body,
        noticeOrigin(request),
      );
      return reply.code(201).send(passkey);
    },
  );

  app.patch<{ Params: Static<typeof PasskeyParams>; Body: Static<typeof RenameBody> }>(
    '/v1/account/passkeys/:id',
    {
      ...otherChange,
      schema: {
        operationId: 'renamePasskey',
        summary: 'Rename one of your passkeys',
        tags: ['account'],
        description: 'Audited (passkey_rename). Needs the CSRF token.',
        security: COOKIE,
        params: PasskeyParams,
        body: RenameBody,
        response: responses({ 200: PasskeySchema }, [...ACCOUNT_ERRORS, 404]),
      },
    },
    async (request) => {
      const session = await requireAccountSession(deps, request);
      return renamePasskey(
        deps,
        accountActor(request),
        session.identity.id,
        request.params.id,
        request.body.name,
      );
    },
  );

  app.delete<{ Params: Static<typeof PasskeyParams> }>(
    '/v1/account/passkeys/:id',
    {
      ...credentialChange,
      schema: {
        operationId: 'deleteOwnPasskey',
        summary: 'Delete one of your passkeys',
        tags: ['account'],
        description:
          'Audited (passkey_delete). Needs the CSRF token (X-CSRF-Token) and a recent sign-in; for an identity with a second factor or a passkey, an aal2 session (403 forbidden otherwise).',
        security: COOKIE,
        params: PasskeyParams,
        response: responses({ 204: NoContent('Deleted') }, [...ACCOUNT_ERRORS, 404]),
      },
    },
    async (request, reply) => {
      const session = await requireAccountSession(deps, request);
      await deletePasskey(deps, accountActor(request), session.identity.id, request.params.id);
      return reply.code(204).send();
    },
  );

  /** The page's failures: a short page for a browser, the error model for anyone else. */
  function pageOrJsonError(error: unknown, request: FastifyRequest, reply: FastifyReply) {
    if (!prefersHtml(request)) return handleError(error, request, reply);
    const domain = refusalOf(error);
    if (!domain) return handleError(error, request, reply);
    request.errorCode = domain.code;
    const message =
      domain.code === 'identity_disabled'
        ? 'This account is disabled. Contact your administrator.'
        : 'Your passkeys cannot be shown right now. Try again in a moment.';
    return sendPage(reply, ERROR_STATUS[domain.code], messagePage({ title: 'Passkeys', message }));
  }
}
