import { type TProperties, Type } from '@sinclair/typebox';
import type { SignInMethod } from '../domain/sign-in/method.js';
import type { SignInMethodDeps, SignInMethodId } from '../domain/sign-in/methods.js';
import { passkeyMethod } from '../domain/sign-in/passkey/passkey-method.js';
import { passwordMethod } from '../domain/sign-in/password/password-method.js';
import { recoveryCodeMethod } from '../domain/sign-in/recovery-code/recovery-code-method.js';
import type { AnySecondFactorMethod } from '../domain/sign-in/second-factors.js';
import { totpMethod } from '../domain/sign-in/totp/totp-method.js';

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
   * `POST /v1/flows/{id}/<method id>/options`, which issues it.
   */
  challenge?: { summary: string; description: string };
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
