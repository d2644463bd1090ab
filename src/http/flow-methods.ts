import { type TProperties, Type } from '@sinclair/typebox';
import type { SignInMethod } from '../domain/sign-in/method.js';
import type { SignInMethodDeps, SignInMethodId } from '../domain/sign-in/methods.js';
import { passkeyMethod } from '../domain/sign-in/passkey/passkey-method.js';
import { passwordMethod } from '../domain/sign-in/password/password-method.js';

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
        'Issues a WebAuthn challenge bound to the flow (single use, expires with the flow; a new request replaces the previous one) and answers the PublicKeyCredentialRequestOptions JSON: empty allowCredentials, user verification required.',
    },
  },
];

/** The route URL of a method's flow submission, as Fastify declares it. */
export function flowMethodUrl(id: SignInMethodId): string {
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
