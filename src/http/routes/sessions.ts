import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
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
  /** Each verify's session row, read with its caller's token before the body is validated. */
  const sessionReads = new WeakMap<FastifyRequest, SessionRead>();
  app.post<{ Body: Static<typeof VerifyBody> }>(
    '/v1/sessions/verify',
    {
      config: {
        grant: 'introspect',
        action: 'session_verify',
        async readCaller(request, token) {
          const body = request.body as { token?: unknown } | undefined;
          const { caller, read } = await readCallerWithSession(deps, token, body?.token);
          if (read) sessionReads.set(request, read);
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
      const session = await verifySession(deps, request.body.token, sessionReads.get(request));
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
