import { type TProperties, type TSchema, Type } from '@sinclair/typebox';
import type { DomainError } from '../domain/errors.js';
import type { FlowRecord } from '../domain/login-flows/flow.js';
import { emailCodeMethod } from '../domain/sign-in/email-code/email-code-method.js';
import type { SignInMethod } from '../domain/sign-in/method.js';
import type { SignInMethodDeps, SignInMethodId } from '../domain/sign-in/methods.js';
import { passkeyMethod } from '../domain/sign-in/passkey/passkey-method.js';
import { passwordMethod } from '../domain/sign-in/password/password-method.js';
import { recoveryCodeMethod } from '../domain/sign-in/recovery-code/recovery-code-method.js';
import type { AnySecondFactorMethod } from '../domain/sign-in/second-factors.js';
import { totpMethod } from '../domain/sign-in/totp/totp-method.js';
import { emailCodePage } from './login-page/email-code-page.js';

/** A sign-in method's HTTP surface on login flows: `POST /v1/flows/{id}/<method id>`. */
export interface FlowMethodSurface {
  method: SignInMethod<SignInMethodId, unknown, SignInMethodDeps>;
  /**
   * The method's body fields; the route adds `csrf_token`. Declare them optional: a missing
   * field is then refused by the method's `parse`, whose message the hosted page knows.
   */
  fields: TProperties;
  /** The OpenAPI operation's summary and description. */
  summary: string;
  description: string;
  /**
   * For a method that answers a challenge (its `challenge`): the OpenAPI texts of
   * `POST /v1/flows/{id}/<method id>/options`, which issues it, its body fields beside
   * `csrf_token` (optional, as above; none by default) and its 200 answer (by default
   * `ChallengeOptionsSchema`, WebAuthn options).
   */
  challenge?: { summary: string; description: string; fields?: TProperties; response?: TSchema };
  /**
   * For a method the hosted page serves without script, by form posts: the page of its own
   * step. `challenge`: the answer to a form post to its challenge (the page asking for the
   * method's fields), or that post's failure; `submit`: a failed form post to the method,
   * shown again with the error. Without one, failures show the login page (the password
   * form) again.
   */
  formPage?(input: FormPageInput): string;
}

export interface FormPageInput {
  flow: FlowRecord;
  step: 'challenge' | 'submit';
  /** The posted fields (or, after a challenge, what it answered), for the page to keep. */
  fields: Readonly<Record<string, unknown>>;
  error?: DomainError;
}

/**
 * The methods a login flow accepts. The submit routes and the browser credentials zone's
 * CORS routes are built from this list; a method without a browser surface (link sign-in
 * is a service's call) is not on it.
 */
export const FLOW_METHODS: readonly FlowMethodSurface[] = [
  {
    method: passwordMethod,
    fields: {
      username: Type.Optional(Type.String()),
      password: Type.Optional(Type.String()),
    },
    summary: 'Submit username and password to a login flow',
    description:
      'JSON or an HTML form post (application/x-www-form-urlencoded): a form post answers 303 to return_to, or a page. Sets the service_session cookie on success.',
  },
  {
    method: passkeyMethod,
    fields: {
      credential: Type.Optional(
        Type.Unknown({
          description:
            "The browser's assertion as JSON (PublicKeyCredential.toJSON(), or @simplewebauthn/browser's startAuthentication result) for the flow's current challenge",
        }),
      ),
    },
    summary: 'Sign in to a login flow with a passkey',
    description:
      'JSON: the assertion for the challenge of POST /v1/flows/{id}/passkey/options. Usernameless: the credential names the identity. Sets the service_session cookie on success. docs/passkeys.md.',
    challenge: {
      summary: 'Passkey options (a challenge) for a login flow',
      description:
        'Issues a WebAuthn challenge bound to the flow (single use, expires with the flow; a new request replaces the previous one) and answers the PublicKeyCredentialRequestOptions JSON: empty allowCredentials, user verification required. Counted per client address (SERVICE_RATE_LIMIT_CHALLENGE_IP, 429 past it) before the flow is looked up.',
    },
  },
  {
    method: emailCodeMethod,
    fields: {
      address: Type.Optional(
        Type.String({ description: 'The email address the code was mailed to' }),
      ),
      code: Type.Optional(Type.String({ description: 'The code from the mail' })),
    },
    summary: 'Sign in to a login flow with a code mailed to the address',
    description:
      "Only when SERVICE_SIGN_IN_EMAIL_CODE=on (else 404 not_found). JSON or an HTML form post, like the password step: the address and the code POST /v1/flows/{id}/email_code/options mailed. A wrong, used or expired code and an address without an account are all 401 invalid_credentials, counted to the flow's attempt cap. Gives aal1: an identity with a second factor goes on to second_factor_required. docs/email-code.md.",
    challenge: {
      summary: 'Mail a sign-in code for a login flow',
      description:
        'Only when SERVICE_SIGN_IN_EMAIL_CODE=on (else 404 not_found). Mails a one-time code when the address is the verified address of an active identity, and answers the same for any other address, to which nothing is sent. JSON, or an HTML form post answered with the page asking for the code. Counted per client address (SERVICE_RATE_LIMIT_CHALLENGE_IP, 429 past it); codes sent per identity and requests per address are limited without a word (the same answer, no mail). docs/email-code.md.',
      fields: {
        address: Type.Optional(
          Type.String({ description: 'The email address to send the code to' }),
        ),
      },
      response: Type.Object(
        {
          options: Type.Object({
            address: Type.String({
              description: 'The address as understood (canonical): the submission repeats it',
            }),
            code_length: Type.Integer({ description: 'How many digits the mailed code has' }),
          }),
        },
        {
          description:
            'The same for every address: a code was mailed if the address is the verified address of an account.',
        },
      ),
    },
    formPage: emailCodePage,
  },
];

/** A second factor's HTTP surface on login flows: `POST /v1/flows/{id}/<method id>`. */
export interface SecondFactorSurface {
  method: AnySecondFactorMethod;
  /** The method's body fields, optional as for first factors; the route adds `csrf_token`. */
  fields: TProperties;
  summary: string;
  description: string;
}

/**
 * The second factors a flow waiting in `second_factor_required` accepts (docs/two-factor.md).
 * Their routes and their place in the browser credentials zone are built from this list.
 */
export const SECOND_FACTOR_SURFACES: readonly SecondFactorSurface[] = [
  {
    method: totpMethod,
    fields: { code: Type.Optional(Type.String({ description: 'The 6-digit code of the app' })) },
    summary: "Submit an authenticator app's code to a flow waiting for a second factor",
    description:
      'Only for a flow in state second_factor_required. JSON or an HTML form post, like the password step; completes the flow with an aal2 session and sets the service_session cookie. A code whose time step was already used is refused.',
  },
  {
    method: recoveryCodeMethod,
    fields: {
      recovery_code: Type.Optional(
        Type.String({ description: 'One of the recovery codes; each works once' }),
      ),
    },
    summary: 'Submit a recovery code to a flow waiting for a second factor',
    description:
      'Only for a flow in state second_factor_required, when the authenticator app is not at hand. Each recovery code completes one sign-in (aal2) and is then spent.',
  },
];

/** The route URL of a method's flow submission, as Fastify declares it. */
export function flowMethodUrl(id: string): string {
  return `/v1/flows/:id/${id}`;
}

/** The route URL where a challenge-answering method issues its challenge. */
export function flowChallengeUrl(id: SignInMethodId): string {
  return `${flowMethodUrl(id)}/options`;
}

/** Every flow route of the methods: submissions and challenge requests (the CORS zone's). */
export function flowMethodUrls(): string[] {
  return FLOW_METHODS.flatMap(({ method, challenge }) =>
    challenge
      ? [flowMethodUrl(method.id), flowChallengeUrl(method.id)]
      : [flowMethodUrl(method.id)],
  );
}
