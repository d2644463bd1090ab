import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { validationError } from '../../domain/errors.js';
import {
  type SessionRead,
  readCallerWithSession,
  revokeSessionById,
  revokeSessionByToken,
  verifySession,
} from '../../domain/sessions/session-service.js';
import type { AppDeps } from '../deps.js';
import { NoContent, SERVICE_ERRORS, SessionSchema, responses } from '../schemas.js';
import { actorOf } from '../service-auth.js';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * A verify's session row, read with its caller's token before the body is validated.
     * A request decoration: the first form, a WeakMap keyed by the request (and another for
     * the awaited token), took verify on SQLite from 0.64-0.66 of its floor's CPU to
     * 0.53-0.58 and its peak RSS from 150 to 191-224 MB under the bench's load.
     */
    sessionRead: SessionRead | null;
  }
}

export const VerifyBody = Type.Object(
  { token: Type.String({ description: 'The session token (tess_s_…)' }) },
  { additionalProperties: false },
);
export const RevokeBody = Type.Object(
  {
    session_id: Type.Optional(Type.String({ format: 'uuid' })),
    token: Type.Optional(Type.String()),
  },
  {
    additionalProperties: false,
    description: 'Exactly one of session_id or token.',
  },
);

export function sessionRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.decorateRequest('sessionRead', null);
  app.post<{ Body: Static<typeof VerifyBody> }>(
    '/v1/sessions/verify',
    {
      config: {
        grant: 'introspect',
        action: 'session_verify',
        async readCaller(request, token) {
          const body = request.body as { token?: unknown } | undefined;
          const { caller, read } = await readCallerWithSession(deps, token, body?.token);
          request.sessionRead = read ?? null;
          return caller;
        },
      },
      schema: {
        operationId: 'verifySession',
        summary: 'Check a session token and get its session',
        tags: ['sessions'],
        body: VerifyBody,
        response: responses({ 200: SessionSchema }, SERVICE_ERRORS),
      },
    },
    async (request) => {
      const session = await verifySession(
        deps,
        request.body.token,
        request.sessionRead ?? undefined,
      );
      request.audit!.target = session.identity.id;
      request.audit!.details.session_id = session.id;
      return session;
    },
  );

  app.post<{ Body: Static<typeof RevokeBody> }>(
    '/v1/sessions/revoke',
    {
      config: { grant: 'revoke', action: 'session_revoke', auditedInTransaction: true },
      schema: {
        operationId: 'revokeSession',
        summary: 'Revoke one session, by id or by token',
        tags: ['sessions'],
        body: RevokeBody,
        response: responses({ 204: NoContent('Revoked (also when it already was)') }, [
          ...SERVICE_ERRORS,
          404,
        ]),
      },
    },
    async (request, reply) => {
      const { session_id: sessionId, token } = request.body;
      if ((sessionId === undefined) === (token === undefined)) {
        throw validationError('give exactly one of session_id or token');
      }
      const actor = actorOf(request.caller);
      if (sessionId !== undefined) await revokeSessionById(deps, actor, sessionId);
      else await revokeSessionByToken(deps, actor, token!);
      return reply.code(204).send();
    },
  );
}
