import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DomainError } from '../../domain/errors.js';
import { startEmailVerification } from '../../domain/verification/email-verification.js';
import { toIso } from '../../lib/clock.js';
import { accountActor, accountChangeHooks, requireAccountSession } from '../account-session.js';
import type { AppDeps } from '../deps.js';
import { ERROR_STATUS, handleError, refusalOf } from '../errors.js';
import { isFormPost, sendPage } from '../login-page/respond.js';
import { escapeHtml, layout } from '../login-page/render.js';
import { responses, seeOther } from '../schemas.js';
import { VERIFICATION_PATH } from '../verification-page/render.js';
import { VerificationSchema, mailLocaleOf, verificationDeps } from './verification.js';

export const ACCOUNT_EMAIL_PATH = '/v1/account/email';

export const AccountEmailBody = Type.Object(
  {
    email: Type.String({ description: 'The new address; it replaces the old one once confirmed' }),
    csrf_token: Type.Optional(
      Type.String({ description: 'Form posts; JSON clients send the X-CSRF-Token header instead' }),
    ),
  },
  { additionalProperties: false },
);

export const StartedVerificationSchema = Type.Object(
  { verification: VerificationSchema },
  { description: 'The pending address and its verification flow; the mail is on its way.' },
);

/**
 * `POST /v1/account/email` (docs/account.md, "Email address"): a credential change (an
 * address can recover the account), so it needs the identity's strongest sign-in and a
 * recent one. The address waits for its code; the account's address stays until then.
 */
export function accountEmailRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Body: Static<typeof AccountEmailBody> }>(
    ACCOUNT_EMAIL_PATH,
    {
      ...accountChangeHooks(deps, { credential: true }),
      errorHandler: (error, request, reply) =>
        isFormPost(request)
          ? formFailure(request, reply, error)
          : handleError(error, request, reply),
      schema: {
        operationId: 'changeAccountEmail',
        summary: 'Ask to change the signed-in user’s email address',
        tags: ['account'],
        description:
          'Mails a code and a link to the new address; the address replaces the old one only once confirmed through GET /v1/verification, and the old address is told then. A taken address: 409 email_taken. A credential change: 403 forbidden for an aal1 session of an identity with a second factor or passkey, or without a recent sign-in.',
        security: [{ sessionCookie: [] }],
        consumes: ['application/json', 'application/x-www-form-urlencoded'],
        body: AccountEmailBody,
        response: responses(
          {
            202: StartedVerificationSchema,
            303: seeOther('Form post: on to the verification page'),
          },
          [401, 403, 409, 422, 429, 503, 504],
          { html: true },
        ),
      },
    },
    async (request, reply) => {
      const session = await requireAccountSession(deps, request);
      const { record } = await deps.store.transaction((tx) =>
        startEmailVerification(verificationDeps(deps, request), tx, accountActor(request), {
          identityId: session.identity.id,
          email: request.body.email,
          locale: mailLocaleOf(request),
        }),
      );
      if (isFormPost(request)) {
        const target = `${VERIFICATION_PATH}?id=${encodeURIComponent(record.id)}`;
        return reply.header('cache-control', 'no-store').redirect(target, 303);
      }
      return reply
        .code(202)
        .header('cache-control', 'no-store')
        .send({
          verification: {
            id: record.id,
            flow_id: record.id,
            state: 'pending',
            address: record.address,
            expires_at: toIso(record.expires_at),
            return_to: null,
            csrf_token: record.csrf_token,
          },
        });
    },
  );
}

/** The sentence a refused form post shows above the way back to the account page. */
function refusalSentence(error: DomainError): string {
  if (error.code === 'email_taken') return 'This address belongs to another account.';
  if (error.code === 'rate_limited') {
    return `Too many codes sent. Try again in ${error.retryAfterSeconds ?? 60} seconds.`;
  }
  if ((error.code === 'validation_error' || error.code === 'forbidden') && error.hasClientMessage) {
    return error.message;
  }
  return 'The address was not changed. Go back and try again.';
}

/** A form post's refusal: a page saying why, with the error model's status. */
function formFailure(
  request: FastifyRequest,
  reply: FastifyReply,
  thrown: unknown,
): FastifyReply | Promise<FastifyReply> {
  const error = refusalOf(thrown);
  if (!error) return handleError(thrown, request, reply);
  request.errorCode = error.code;
  const body = `<h1>Email address not changed</h1>
<div class="error" role="alert">${escapeHtml(refusalSentence(error))}</div>
<p><a href="/v1/account">Back to your account</a></p>`;
  return sendPage(reply, ERROR_STATUS[error.code], layout('Email address not changed', body));
}
