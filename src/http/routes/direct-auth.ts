import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import {
  registerAndAuthenticate,
  registerIdentity,
} from '../../domain/identities/identity-service.js';
import { authenticateWithPassword } from '../../domain/sign-in/password/authenticate-password.js';
import { consumeRateLimit } from '../../domain/rate-limit/rate-limiter.js';
import { passwordMethod } from '../../domain/sign-in/password/password-method.js';
import {
  DIRECT_SECOND_FACTOR_FIELDS,
  type DirectSecondFactorFields,
} from '../../domain/sign-in/second-factors.js';
import { CLIENT_IP_HEADER, clientAddress } from '../client-address.js';
import type { AppDeps } from '../deps.js';
import { statedDevice } from '../device.js';
import {
  ClientDeviceHeaders,
  IdentitySchema,
  MintedSessionSchema,
  SERVICE_ERRORS,
  StatedDeviceHeaders,
  responses,
} from '../schemas.js';
import { actorOf } from '../service-auth.js';

export const RegisterBody = Type.Object(
  {
    username: Type.String(),
    password: Type.String(),
    display_name: Type.Optional(Type.String()),
    avatar_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    email: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description: 'An address no other identity has (else 409 email_taken); null: none',
      }),
    ),
    email_verified: Type.Optional(
      Type.Boolean({
        description: 'The caller vouches for the address (default false); needs email',
      }),
    ),
  },
  { additionalProperties: false },
);
export const PasswordBody = Type.Object(
  {
    username: Type.String(),
    password: Type.String(),
    totp_code: Type.Optional(
      Type.String({
        description:
          'Only for an identity with a second factor: the code of its authenticator app (docs/two-factor.md)',
      }),
    ),
    recovery_code: Type.Optional(
      Type.String({ description: 'Instead of totp_code: one of its recovery codes' }),
    ),
  },
  { additionalProperties: false },
);

/** The second factor a body presents, for a refusal's audit row; none when it sends two. */
function namedSecondFactor(body: DirectSecondFactorFields): string | undefined {
  const named = Object.entries(DIRECT_SECOND_FACTOR_FIELDS).filter(
    ([field]) => body[field as keyof DirectSecondFactorFields] !== undefined,
  );
  return named.length === 1 ? named[0]![1].method.id : undefined;
}

export function directAuthRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Body: Static<typeof RegisterBody> }>(
    '/v1/register',
    {
      config: { grant: 'direct_auth', action: 'identity_register', auditedInTransaction: true },
      schema: {
        operationId: 'register',
        summary: 'Create an identity with a password',
        tags: ['identities'],
        body: RegisterBody,
        description: 'A taken username is 409 username_taken; a taken email, 409 email_taken.',
        response: responses({ 201: IdentitySchema }, [...SERVICE_ERRORS, 409]),
      },
    },
    async (request, reply) => {
      request.audit!.details.username = request.body.username;
      const identity = await registerIdentity(deps, actorOf(request.caller), request.body);
      return reply.code(201).send(identity);
    },
  );

  app.post<{ Body: Static<typeof RegisterBody> }>(
    '/v1/register-and-authenticate',
    {
      config: {
        grant: 'direct_auth',
        action: 'identity_register_and_authenticate',
        auditedInTransaction: true,
      },
      schema: {
        operationId: 'registerAndAuthenticate',
        summary: 'Create an identity and sign it in',
        tags: ['identities'],
        headers: StatedDeviceHeaders,
        body: RegisterBody,
        description: 'A taken username is 409 username_taken; a taken email, 409 email_taken.',
        response: responses({ 201: MintedSessionSchema }, [...SERVICE_ERRORS, 409]),
      },
    },
    async (request, reply) => {
      Object.assign(request.audit!.details, {
        username: request.body.username,
        sign_in_method: passwordMethod.id,
      });
      const minted = await registerAndAuthenticate(
        deps,
        actorOf(request.caller),
        request.body,
        statedDevice(request, request.caller),
      );
      return reply.code(201).send(minted);
    },
  );

  app.post<{ Body: Static<typeof PasswordBody> }>(
    '/v1/authenticate/password',
    {
      config: { grant: 'direct_auth', action: 'authenticate_password', auditedInTransaction: true },
      schema: {
        operationId: 'authenticatePassword',
        summary: 'Sign in with username and password',
        tags: ['sessions'],
        description: `Per-username rate limit; per-address too when a browser_proxy caller states ${CLIENT_IP_HEADER}. An identity with a second factor also needs totp_code or recovery_code: without one the answer is 403 forbidden with a message and no session; a wrong one is 401 invalid_credentials; the session is then aal2.`,
        headers: ClientDeviceHeaders,
        body: PasswordBody,
        response: responses({ 200: MintedSessionSchema }, [...SERVICE_ERRORS, 429]),
      },
    },
    async (request) => {
      const secondFactor = namedSecondFactor(request.body);
      Object.assign(request.audit!.details, {
        username: request.body.username,
        sign_in_method: passwordMethod.id,
        ...(secondFactor === undefined ? {} : { second_factor: secondFactor }),
      });
      if (request.headers[CLIENT_IP_HEADER] !== undefined) {
        const address = clientAddress(request, request.caller);
        await consumeRateLimit(
          deps.store,
          deps.clock,
          `auth:ip:${address}`,
          deps.config.rateLimits.loginIp,
        );
      }
      return authenticateWithPassword(
        deps,
        actorOf(request.caller),
        request.body,
        statedDevice(request, request.caller),
      );
    },
  );
}
