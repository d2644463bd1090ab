import { noticeOrigin } from '../notice-origin.js';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { endOtherSessions, endOwnSession } from '../../domain/account/account-sessions.js';
import { changeOwnPassword } from '../../domain/account/change-password.js';
import { needsStepUp } from '../../domain/account/credential-change.js';
import { DomainError, validationError } from '../../domain/errors.js';
import { updateProfile } from '../../domain/identities/identity-service.js';
import { isRecentSignIn } from '../../domain/sessions/recent-sign-in.js';
import { listIdentitySessions } from '../../domain/sessions/session-list.js';
import type { Session } from '../../domain/sessions/session.js';
import { toIso } from '../../lib/clock.js';
import { ACCOUNT_PATHS } from '../account-page/render.js';
import {
  NOTICES,
  type Notice,
  accountLoginUrl,
  renderAccountPage,
  sendAccountHtml,
  sendFormFailure,
} from '../account-page/respond.js';
import {
  accountActor,
  accountChangeHooks,
  accountCsrfToken,
  requireAccountSession,
  verifiedAccountSession,
} from '../account-session.js';
import { clearSessionCookie } from '../cookies.js';
import type { AppDeps } from '../deps.js';
import { handleError, refusalOf } from '../errors.js';
import { isFormPost, sendPage } from '../login-page/respond.js';
import { messagePage } from '../login-page/render.js';
import { RevokedSchema } from './identities.js';
import { IdParams, IdentitySchema, NoContent, Timestamp, responses, seeOther } from '../schemas.js';
import { AccountSessionSchema, toSessionListItem } from '../session-list.js';

const CsrfField = Type.Optional(
  Type.String({ description: 'Form posts; JSON clients send the X-CSRF-Token header instead' }),
);

export const AccountProfileSchema = Type.Object(
  {
    identity: IdentitySchema,
    csrf_token: Type.String({
      description: 'For the X-CSRF-Token header of this session’s state-changing requests',
    }),
    session_id: Type.String({ format: 'uuid', description: 'The session making the request' }),
    recent_sign_in_until: Type.Union([Timestamp, Type.Null()], {
      description:
        'Until when a password can be set without the current one; null once that has passed, or while step_up_required',
    }),
    step_up_required: Type.Boolean({
      description:
        'True for an aal1 session of an identity with a second factor or a passkey: credential changes need a sign-in with that factor first (403 forbidden until then)',
    }),
  },
  { description: 'The signed-in user, and what their account requests need.' },
);

export const AccountProfileBody = Type.Object(
  {
    display_name: Type.Optional(Type.String()),
    avatar_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    csrf_token: CsrfField,
  },
  {
    additionalProperties: false,
    description:
      'The fields to change; a field left out keeps its value. A form’s empty avatar_url is none.',
  },
);

export const AccountPasswordBody = Type.Object(
  {
    current_password: Type.Optional(
      Type.String({ description: 'Needed unless the sign-in is recent (recent_sign_in_until)' }),
    ),
    new_password: Type.String({ description: 'The password policy applies' }),
    new_password_confirm: Type.Optional(
      Type.String({ description: 'Forms: must equal new_password when sent' }),
    ),
    revoke_other_sessions: Type.Optional(
      Type.Union([Type.Boolean(), Type.Literal('true')], {
        description:
          'End the other sessions. JSON: default true. Forms: a checkbox, so absent means false',
      }),
    ),
    csrf_token: CsrfField,
  },
  { additionalProperties: false },
);

const PageQuery = Type.Object({ done: Type.Optional(Type.String()) });

type IdRoute = { Params: Static<typeof IdParams> };

/** Statuses of every account request: not signed in, refused, outage. */
const ACCOUNT_ERRORS = [401, 403, 503, 504];
const COOKIE = [{ sessionCookie: [] }];

/**
 * The hosted account page and its JSON API (docs/account.md). Registered in the browser
 * scope (cookies; the account CORS zone in cors.ts). Every state change checks Origin and
 * the session cookie, then its CSRF token, then the body (accountChangeHooks).
 */
export function accountRoutes(app: FastifyInstance, deps: AppDeps): void {
  const sessionOf = (request: FastifyRequest): Promise<Session> =>
    requireAccountSession(deps, request);
  const changeHooks = accountChangeHooks(deps, { credential: false });
  const cookieSettings = {
    cookieDomain: deps.config.cookieDomain,
    sessionTtlMs: deps.sessionTtlMs,
  };

  /**
   * A form post's refusal: the page again with the message above its form, once the session
   * is known; the login page when there is none; a short refusal page otherwise.
   */
  const formErrors =
    (form: 'profile' | 'password' | 'sessions') =>
    async (thrown: unknown, request: FastifyRequest, reply: FastifyReply) => {
      if (!isFormPost(request)) return handleError(thrown, request, reply);
      const error = refusalOf(thrown);
      if (!error) return handleError(thrown, request, reply);
      request.errorCode = error.code;
      const session = verifiedAccountSession(request);
      const signedOut = ['invalid_token', 'session_expired', 'identity_disabled'];
      if (!session && signedOut.includes(error.code)) return toLogin(request, reply);
      if (!session) {
        const page = messagePage({
          title: 'Request refused',
          message: 'This form was sent from another site, so it was refused.',
        });
        return sendPage(reply, 403, page);
      }
      try {
        return await sendFormFailure(deps, request, reply, session, error, form);
      } catch (renderError) {
        return handleError(renderError, request, reply);
      }
    };

  /** To the hosted login, coming back here. */
  function toLogin(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    return reply.header('cache-control', 'no-store').redirect(accountLoginUrl(deps, request), 303);
  }

  /** A form post's success: back to the page with a fixed notice (post, redirect, get). */
  const backToPage = (reply: FastifyReply, done: Notice) =>
    reply.header('cache-control', 'no-store').redirect(`${ACCOUNT_PATHS.page}?done=${done}`, 303);

  app.get<{ Querystring: Static<typeof PageQuery> }>(
    ACCOUNT_PATHS.page,
    {
      exposeHeadRoute: false,
      schema: {
        operationId: 'accountPage',
        summary: 'The hosted account page',
        tags: ['account'],
        description:
          'Profile, password and sessions of the signed-in user, as HTML forms that work without JavaScript. Signed out: 303 to the hosted login, returning here.',
        security: [{}, ...COOKIE],
        querystring: PageQuery,
        response: responses(
          {
            200: Type.Unsafe({
              description: 'The account page',
              content: { 'text/html': { schema: Type.String({ description: 'HTML' }) } },
            }),
            303: seeOther('Not signed in: to /v1/login, with return_to back here'),
          },
          [422, 503, 504],
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      let session: Session;
      try {
        session = await requireAccountSession(deps, request);
      } catch (error) {
        if (
          error instanceof DomainError &&
          error.code !== 'unavailable' &&
          error.code !== 'timeout'
        ) {
          return toLogin(request, reply);
        }
        throw error;
      }
      const done = request.query.done;
      const notice =
        done !== undefined && Object.hasOwn(NOTICES, done) ? NOTICES[done as Notice] : undefined;
      return sendAccountHtml(
        reply,
        200,
        await renderAccountPage(deps, request, session, { notice }),
      );
    },
  );

  app.get(
    ACCOUNT_PATHS.profile,
    {
      schema: {
        operationId: 'getAccountProfile',
        summary: 'The signed-in user, with the CSRF token for account requests',
        tags: ['account'],
        security: COOKIE,
        response: responses({ 200: AccountProfileSchema }, ACCOUNT_ERRORS),
      },
    },
    async (request, reply) => {
      const session = await sessionOf(request);
      const signedInAt = Date.parse(session.issued_at);
      const windowMs = deps.config.privilegedWindowMs;
      const stepUp = await needsStepUp(deps.store, session);
      const recent = !stepUp && isRecentSignIn(signedInAt, deps.clock.now(), windowMs);
      return reply.header('cache-control', 'no-store').send({
        identity: session.identity,
        csrf_token: accountCsrfToken(deps, session),
        session_id: session.id,
        recent_sign_in_until: recent ? toIso(signedInAt + windowMs) : null,
        step_up_required: stepUp,
      });
    },
  );

  const saveProfile = async (
    request: FastifyRequest<{ Body: Static<typeof AccountProfileBody> }>,
    reply: FastifyReply,
  ) => {
    const session = await sessionOf(request);
    const { display_name: displayName, avatar_url: avatarUrl } = request.body ?? {};
    const form = isFormPost(request);
    const identity = await updateProfile(deps, accountActor(request), session.identity.id, {
      display_name: displayName,
      // A form cannot send null: its empty field means "no avatar".
      avatar_url: form && avatarUrl === '' ? null : avatarUrl,
    });
    if (form) return backToPage(reply, 'profile');
    return reply.header('cache-control', 'no-store').send(identity);
  };
  const profileRoute = (method: 'PATCH' | 'POST') => ({
    ...changeHooks,
    errorHandler: formErrors('profile'),
    schema: {
      operationId: method === 'PATCH' ? 'updateAccountProfile' : 'postAccountProfile',
      summary:
        method === 'PATCH'
          ? 'Change the signed-in user’s display name or avatar'
          : 'Change the profile (form post, or JSON like PATCH)',
      tags: ['account'],
      security: COOKIE,
      ...(method === 'POST' && {
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
      }),
      body: AccountProfileBody,
      response: responses(
        method === 'POST'
          ? { 200: IdentitySchema, 303: seeOther('Form post: back to the account page') }
          : { 200: IdentitySchema },
        [...ACCOUNT_ERRORS, 422],
        { html: method === 'POST' },
      ),
    },
  });
  type ProfileRoute = { Body: Static<typeof AccountProfileBody> };
  app.patch<ProfileRoute>(ACCOUNT_PATHS.profile, profileRoute('PATCH'), saveProfile);
  app.post<ProfileRoute>(ACCOUNT_PATHS.profile, profileRoute('POST'), saveProfile);

  app.post<{ Body: Static<typeof AccountPasswordBody> }>(
    ACCOUNT_PATHS.password,
    {
      ...changeHooks,
      errorHandler: formErrors('password'),
      schema: {
        operationId: 'changeAccountPassword',
        summary: 'Change (or set) the signed-in user’s password',
        tags: ['account'],
        description:
          'Needs current_password, or a sign-in within SERVICE_PRIVILEGED_WINDOW_MINUTES (a link sign-in counts: password recovery). Ends the other sessions unless revoke_other_sessions is false; this one stays. Wrong current password: 401 invalid_credentials; no recent sign-in: 403 forbidden.',
        security: COOKIE,
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        body: AccountPasswordBody,
        response: responses(
          {
            204: NoContent('Password changed'),
            303: seeOther('Form post: back to the account page'),
          },
          [...ACCOUNT_ERRORS, 422, 429],
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const session = await sessionOf(request);
      const body = request.body;
      const form = isFormPost(request);
      if (
        form &&
        body.new_password_confirm !== undefined &&
        body.new_password_confirm !== body.new_password
      ) {
        throw validationError('the two new passwords differ: type the same password twice');
      }
      const revokeOthers = form
        ? body.revoke_other_sessions === 'true'
        : body.revoke_other_sessions !== false;
      await changeOwnPassword(
        { ...deps, privilegedWindowMs: deps.config.privilegedWindowMs },
        accountActor(request),
        session,
        {
          current_password: body.current_password,
          new_password: body.new_password,
          revoke_other_sessions: revokeOthers,
        },
        noticeOrigin(request),
      );
      if (form) return backToPage(reply, revokeOthers ? 'password' : 'password-kept');
      return reply.code(204).send();
    },
  );

  app.get(
    '/v1/account/sessions',
    {
      schema: {
        operationId: 'listAccountSessions',
        summary: 'The signed-in user’s live sessions, newest first',
        tags: ['account'],
        security: COOKIE,
        response: responses({ 200: Type.Array(AccountSessionSchema) }, ACCOUNT_ERRORS),
      },
    },
    async (request, reply) => {
      const session = await sessionOf(request);
      const { identity, sessions } = await listIdentitySessions(deps, session.identity.id);
      return reply.header('cache-control', 'no-store').send(
        sessions.map((row) => ({
          ...toSessionListItem(row, identity),
          current: row.id === session.id,
        })),
      );
    },
  );

  /** Ends one of the user's sessions; ending the current one signs this browser out. */
  const endSession = async (request: FastifyRequest<IdRoute>, reply: FastifyReply) => {
    const session = await sessionOf(request);
    await endOwnSession(deps, accountActor(request), session.identity.id, request.params.id);
    if (request.params.id === session.id) clearSessionCookie(reply, cookieSettings);
    if (isFormPost(request)) return backToPage(reply, 'session');
    return reply.code(204).send();
  };
  app.delete<IdRoute>(
    '/v1/account/sessions/:id',
    {
      ...changeHooks,
      schema: {
        operationId: 'endAccountSession',
        summary: 'End one of the signed-in user’s sessions',
        tags: ['account'],
        description: 'Another user’s session id answers 404, like an unknown one.',
        security: COOKIE,
        params: IdParams,
        response: responses({ 204: NoContent('Ended (also when it already was)') }, [
          ...ACCOUNT_ERRORS,
          404,
          422,
        ]),
      },
    },
    endSession,
  );
  // No body schema on these two: a body-less POST is fine, and a form's only field is the
  // CSRF token, which requireAccountCsrf reads.
  app.post<IdRoute>(
    '/v1/account/sessions/:id/revoke',
    {
      ...changeHooks,
      errorHandler: formErrors('sessions'),
      schema: {
        operationId: 'postEndAccountSession',
        summary: 'End one session (form post; JSON like DELETE)',
        tags: ['account'],
        security: COOKIE,
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        params: IdParams,
        response: responses(
          {
            204: NoContent('Ended (also when it already was)'),
            303: seeOther('Form post: back to the account page'),
          },
          [...ACCOUNT_ERRORS, 404, 422],
          { html: true },
        ),
      },
    },
    endSession,
  );

  app.post(
    ACCOUNT_PATHS.revokeOthers,
    {
      ...changeHooks,
      errorHandler: formErrors('sessions'),
      schema: {
        operationId: 'endOtherAccountSessions',
        summary: 'End every session of the signed-in user but this one',
        tags: ['account'],
        security: COOKIE,
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        response: responses(
          { 200: RevokedSchema, 303: seeOther('Form post: back to the account page') },
          [...ACCOUNT_ERRORS, 422],
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const session = await sessionOf(request);
      const revoked = await endOtherSessions(
        deps,
        accountActor(request),
        session.identity.id,
        session.id,
      );
      if (isFormPost(request)) return backToPage(reply, 'others');
      return reply.header('cache-control', 'no-store').send({ revoked });
    },
  );
}
