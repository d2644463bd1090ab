import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import {
  findIdentityByUsername,
  getIdentity,
  updateProfile,
} from '../../domain/identities/identity-service.js';
import { toIdentity } from '../../domain/identities/identity.js';
import { revokeIdentitySessions } from '../../domain/sessions/session-service.js';
import type { AppDeps } from '../deps.js';
import { IdParams, IdentitySchema, SERVICE_ERRORS, responses } from '../schemas.js';
import { actorOf } from '../service-auth.js';

const ProfileBody = Type.Object(
  {
    display_name: Type.Optional(Type.String()),
    avatar_url: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { additionalProperties: false },
);
const UsernameQuery = Type.Object({ username: Type.String() });

type IdRoute = { Params: Static<typeof IdParams> };

export function identityRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get<IdRoute>(
    '/v1/identities/:id',
    {
      config: { grant: 'identity_read', action: 'identity_read' },
      schema: {
        tags: ['identities'],
        params: IdParams,
        response: responses({ 200: IdentitySchema }, [...SERVICE_ERRORS, 404]),
      },
    },
    async (request) => toIdentity(await getIdentity(deps.store, request.params.id)),
  );

  app.get<{ Querystring: Static<typeof UsernameQuery> }>(
    '/v1/identities',
    {
      config: { grant: 'identity_read', action: 'identity_lookup' },
      schema: {
        tags: ['identities'],
        querystring: UsernameQuery,
        response: responses({ 200: IdentitySchema }, [...SERVICE_ERRORS, 404]),
      },
    },
    async (request) => {
      request.audit!.details.username = request.query.username;
      const identity = await findIdentityByUsername(deps.store, request.query.username);
      request.audit!.target = identity.id;
      return toIdentity(identity);
    },
  );

  const patchOptions = {
    config: { grant: 'identity_write', action: 'identity_update', auditedInTransaction: true },
    schema: {
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
  // SPEC.md's identities page names /profile; its grants page omits it. Both answer.
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
        tags: ['sessions'],
        params: IdParams,
        response: responses({ 200: Type.Object({ revoked: Type.Integer() }) }, [
          ...SERVICE_ERRORS,
          404,
        ]),
      },
    },
    async (request) => ({
      revoked: await revokeIdentitySessions(deps, actorOf(request.caller), request.params.id),
    }),
  );
}
