import { type Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { getIdentity } from '../../domain/identities/identity-service.js';
import { removeSecondFactor, secondFactorStatus } from '../../domain/second-factor/enrolment.js';
import type { AppDeps } from '../deps.js';
import { IdParams, NoContent, SERVICE_ERRORS, responses } from '../schemas.js';
import { actorOf } from '../service-auth.js';
import { TwoFactorStatusSchema, toStatusView } from './account-two-factor.js';

type IdRoute = { Params: Static<typeof IdParams> };

/**
 * Operators and support (docs/two-factor.md): whether an identity has a second factor,
 * and resetting it when the phone is lost. Reading is `identity_read`; a reset is a
 * credential change, an account-takeover vector, so it takes `direct_auth`.
 */
export function secondFactorAdminRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get<IdRoute>(
    '/v1/identities/:id/second-factor',
    {
      config: { grant: 'identity_read', action: 'identity_second_factor_read' },
      schema: {
        operationId: 'getIdentitySecondFactor',
        summary: "An identity's second factor: enrolled, since when, recovery codes left",
        tags: ['identities'],
        params: IdParams,
        response: responses({ 200: TwoFactorStatusSchema }, [...SERVICE_ERRORS, 404]),
      },
    },
    async (request) => {
      const identity = await getIdentity(deps.store, request.params.id);
      return toStatusView(await secondFactorStatus(deps.store, identity.id));
    },
  );

  app.delete<IdRoute>(
    '/v1/identities/:id/second-factor',
    {
      config: {
        grant: 'direct_auth',
        action: 'identity_second_factor_reset',
        auditedInTransaction: true,
      },
      schema: {
        operationId: 'resetIdentitySecondFactor',
        summary: "Reset an identity's second factor (a lost phone)",
        description:
          'Removes the authenticator and every recovery code; the identity then signs in with its first factor alone until it enrols again. 204 also when there was none. Sessions are kept (revoke them with POST /v1/identities/{id}/revoke-sessions).',
        tags: ['identities'],
        params: IdParams,
        response: responses({ 204: NoContent('Reset; the identity has no second factor now') }, [
          ...SERVICE_ERRORS,
          404,
        ]),
      },
    },
    async (request, reply) => {
      await removeSecondFactor(
        deps,
        actorOf(request.caller),
        request.params.id,
        'identity_second_factor_reset',
      );
      return reply.code(204).send();
    },
  );
}
