import { type TProperties, Type } from '@sinclair/typebox';
import type { SignInMethod } from '../domain/sign-in/method.js';
import type { SignInMethodDeps, SignInMethodId } from '../domain/sign-in/methods.js';
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
];

/** The route URL of a method's flow submission, as Fastify declares it. */
export function flowMethodUrl(id: SignInMethodId): string {
  return `/v1/flows/:id/${id}`;
}
