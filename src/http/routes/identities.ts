import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  type IdentityRead,
  findIdentityByUsername,
  getIdentity,
  readCallerWithIdentity,
  updateProfile,
} from '../../domain/identities/identity-service.js';
import { requireIdentityId, toIdentity } from '../../domain/identities/identity.js';
import type { IdentityKey } from '../../domain/identities/identity-store.js';
import { findIdentityByEmail, setIdentityEmail } from '../../domain/identities/identity-email.js';
import { validationError } from '../../domain/errors.js';
import { revokeIdentitySessions } from '../../domain/sessions/session-service.js';
import type { AppDeps } from '../deps.js';
import { setEmailAndSendVerification } from '../../domain/verification/email-verification.js';
import { verificationDeps } from './verification.js';
import { IdParams, IdentitySchema, SERVICE_ERRORS, responses } from '../schemas.js';
import { actorOf } from '../service-auth.js';

export const ProfileBody = Type.Object(
  {
    display_name: Type.Optional(Type.String()),
    avatar_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  {
    additionalProperties: false,
    description: 'The fields to change; a field left out keeps its value.',
  },
);
const LookupQuery = Type.Object(
  {
    username: Type.Optional(Type.String()),
    email: Type.Optional(
      Type.String({ description: 'Instead of username: the address, in any case' }),
    ),
  },
  { description: 'Exactly one of username and email' },
);
export const EmailBody = Type.Object(
  {
    email: Type.Union([Type.String(), Type.Null()], {
      description: 'The address (no other identity may have it); null removes it',
    }),
    verified: Type.Optional(
      Type.Boolean({
        description:
          "The caller vouches for the address. Left out: false for a new address; the identity's address again keeps its verification",
      }),
    ),
    send_verification: Type.Optional(
      Type.Boolean({
        description:
          'True: when the address is left unverified, mail it a code and a link to GET /v1/verification (docs/verification.md); needs SERVICE_PUBLIC_URL. Left out or false: no mail',
      }),
    ),
  },
  { additionalProperties: false },
);
export const RevokedSchema = Type.Object(
  { revoked: Type.Integer({ description: 'How many live sessions were revoked' }) },
  { description: 'The sessions revoked' },
);

type IdRoute = { Params: Static<typeof IdParams> };

declare module 'fastify' {
  interface FastifyRequest {
    /** An identity lookup's row, read with its caller's token (see sessionRead). */
    identityRead: IdentityRead | null;
  }
}

export function identityRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.decorateRequest('identityRead', null);
  /** A lookup's `readCaller` (service-auth.ts): the caller, and the identity `key` names. */
  const readCallerWith =
    (key: (request: FastifyRequest) => [IdentityKey, unknown]) =>
    async (request: FastifyRequest, token: string) => {
      const { caller, read } = await readCallerWithIdentity(deps, token, ...key(request));
      request.identityRead = read ?? null;
      return caller;
    };
  app.get<IdRoute>(
    '/v1/identities/:id',
    {
      config: {
        grant: 'identity_read',
        action: 'identity_read',
        readCaller: readCallerWith((request) => ['id', (request.params as { id: string }).id]),
      },
      schema: {
        operationId: 'getIdentity',
        summary: 'Get an identity by id',
        tags: ['identities'],
        params: IdParams,
        response: responses({ 200: IdentitySchema }, [...SERVICE_ERRORS, 404]),
      },
    },
    async (request) =>
      toIdentity(
        await getIdentity(deps.store, request.params.id, request.identityRead ?? undefined),
      ),
  );

  app.get<{ Querystring: Static<typeof LookupQuery> }>(
    '/v1/identities',
    {
      config: {
        grant: 'identity_read',
        action: 'identity_lookup',
        // Not validated yet: a username beside an email, either one repeated, or a value that
        // cannot be one is not read with the caller (the handler or the schema refuses the
        // first two).
        readCaller: readCallerWith((request) => {
          const { username, email } = request.query as { username?: unknown; email?: unknown };
          if (email === undefined) return ['username', username];
          return ['email', username === undefined ? email : undefined];
        }),
      },
      schema: {
        operationId: 'lookupIdentityByUsername',
        summary: 'Find an identity by username or email address',
        tags: ['identities'],
        querystring: LookupQuery,
        response: responses({ 200: IdentitySchema }, [...SERVICE_ERRORS, 404]),
      },
    },
    async (request) => {
      const { username, email } = request.query;
      if ((username === undefined) === (email === undefined)) {
        throw validationError('give exactly one of username and email');
      }
      // The address stays out of the audit trail (docs/api.md): that it was looked up, not which.
      if (username === undefined) request.audit!.details.by = 'email';
      else request.audit!.details.username = username;
      const identity =
        username === undefined
          ? await findIdentityByEmail(deps.store, email!, request.identityRead ?? undefined)
          : await findIdentityByUsername(deps.store, username, request.identityRead ?? undefined);
      request.audit!.target = identity.id;
      return toIdentity(identity);
    },
  );

  app.put<IdRoute & { Body: Static<typeof EmailBody> }>(
    '/v1/identities/:id/email',
    {
      config: { grant: 'identity_write', action: 'identity_set_email', auditedInTransaction: true },
      schema: {
        operationId: 'setEmail',
        summary: "Set, verify or remove an identity's email address",
        description: 'An address another identity has is 409 email_taken.',
        tags: ['identities'],
        params: IdParams,
        body: EmailBody,
        response: responses({ 200: IdentitySchema }, [...SERVICE_ERRORS, 404, 409]),
      },
    },
    async (request) => {
      const { send_verification: sendVerification, ...change } = request.body;
      const actor = actorOf(request.caller);
      const id = requireIdentityId(request.params.id);
      if (sendVerification !== true) return setIdentityEmail(deps, actor, id, change);
      // The link goes to the user, not back to the backend that called: only the public URL.
      if (deps.config.publicUrl === null) {
        throw validationError('send_verification needs SERVICE_PUBLIC_URL');
      }
      return setEmailAndSendVerification(verificationDeps(deps, request), actor, id, change);
    },
  );

  const patchOptions = {
    config: { grant: 'identity_write', action: 'identity_update', auditedInTransaction: true },
    schema: {
      operationId: 'updateProfile',
      summary: "Change an identity's display name or avatar",
      tags: ['identities'],
      params: IdParams,
      body: ProfileBody,
      response: responses({ 200: IdentitySchema }, [...SERVICE_ERRORS, 404]),
    },
  } as const;
  const patchHandler = async (request: {
    params: Static<typeof IdParams>;
    body: Static<typeof ProfileBody>;
    caller: Parameters<typeof actorOf>[0];
  }) => updateProfile(deps, actorOf(request.caller), request.params.id, request.body);
  // The canonical path has /profile; the alias without it is kept for clients that use it. Both answer.
  app.patch<IdRoute & { Body: Static<typeof ProfileBody> }>(
    '/v1/identities/:id/profile',
    patchOptions,
    patchHandler,
  );
  app.patch<IdRoute & { Body: Static<typeof ProfileBody> }>(
    '/v1/identities/:id',
    { ...patchOptions, schema: { ...patchOptions.schema, hide: true } },
    patchHandler,
  );

  app.post<IdRoute>(
    '/v1/identities/:id/revoke-sessions',
    {
      config: { grant: 'revoke', action: 'identity_revoke_sessions', auditedInTransaction: true },
      schema: {
        operationId: 'revokeIdentitySessions',
        summary: "Revoke all of an identity's sessions",
        tags: ['sessions'],
        params: IdParams,
        response: responses({ 200: RevokedSchema }, [...SERVICE_ERRORS, 404]),
      },
    },
    async (request) => ({
      revoked: await revokeIdentitySessions(deps, actorOf(request.caller), request.params.id),
    }),
  );
}
