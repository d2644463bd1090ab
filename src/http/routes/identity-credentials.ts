import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { setPassword } from '../../domain/passwords/set-password.js';
import { listIdentitySessions } from '../../domain/sessions/session-list.js';
import type { AppDeps } from '../deps.js';
import { IdParams, NoContent, SERVICE_ERRORS, responses } from '../schemas.js';
import { actorOf } from '../service-auth.js';
import { SessionListItemSchema, toSessionListItem } from '../session-list.js';

export const SetPasswordBody = Type.Object(
  {
    password: Type.String({ description: 'The new password; the password policy applies' }),
    revoke_sessions: Type.Optional(
      Type.Boolean({
        default: true,
        description: "End the identity's live sessions (default true)",
      }),
    ),
  },
  { additionalProperties: false },
);

type IdRoute = { Params: Static<typeof IdParams> };

/** Service endpoints for support screens and password recovery run by a backend (docs/account.md). */
export function identityCredentialRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get<IdRoute>(
    '/v1/identities/:id/sessions',
    {
      config: { grant: 'introspect', action: 'identity_sessions_list' },
      schema: {
        operationId: 'listIdentitySessions',
        summary: "List an identity's live sessions",
        tags: ['sessions'],
        description:
          'Sessions neither revoked nor expired, newest first: Session objects (identity, aal, authenticated_via) with the device each was started from and its last use.',
        params: IdParams,
        response: responses({ 200: Type.Array(SessionListItemSchema) }, [...SERVICE_ERRORS, 404]),
      },
    },
    async (request) => {
      const { identity, sessions } = await listIdentitySessions(deps, request.params.id);
      request.audit!.details.count = sessions.length;
      return sessions.map((row) => toSessionListItem(row, identity));
    },
  );

  app.put<IdRoute & { Body: Static<typeof SetPasswordBody> }>(
    '/v1/identities/:id/password',
    {
      config: { grant: 'direct_auth', action: 'identity_set_password', auditedInTransaction: true },
      schema: {
        operationId: 'setIdentityPassword',
        summary: "Set an identity's password",
        tags: ['identities'],
        description:
          "A credential change, so it needs direct_auth (a service that can already sign users in by password): whoever may set a password can take the account over. Ends the identity's live sessions unless revoke_sessions is false. Audited as identity_set_password.",
        params: IdParams,
        body: SetPasswordBody,
        response: responses({ 204: NoContent('Password set') }, [...SERVICE_ERRORS, 404]),
      },
    },
    async (request, reply) => {
      await setPassword(deps, actorOf(request.caller), request.params.id, request.body.password, {
        revokeSessions: request.body.revoke_sessions ?? true,
      });
      return reply.code(204).send();
    },
  );
}
