import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import {
  deletePasskey,
  listIdentityPasskeys,
  resetPasskeys,
} from '../../domain/passkeys/passkey-service.js';
import type { AppDeps } from '../deps.js';
import { IdParams, NoContent, SERVICE_ERRORS, responses } from '../schemas.js';
import { actorOf } from '../service-auth.js';
import { PasskeySchema } from './account-passkeys.js';

const OnePasskeyParams = Type.Object({ id: Type.String(), passkey_id: Type.String() });

/**
 * Operators and support (docs/passkeys.md): an identity's passkeys, and removing them when
 * a device is lost. Removal is a credential change, an account-takeover vector: direct_auth.
 */
export function identityPasskeyRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.get<{ Params: Static<typeof IdParams> }>(
    '/v1/identities/:id/passkeys',
    {
      config: { grant: 'identity_read', action: 'passkey_list' },
      schema: {
        operationId: 'listIdentityPasskeys',
        summary: "List an identity's passkeys",
        tags: ['passkeys'],
        params: IdParams,
        response: responses({ 200: Type.Array(PasskeySchema, { description: 'Oldest first' }) }, [
          ...SERVICE_ERRORS,
          404,
        ]),
      },
    },
    async (request) => listIdentityPasskeys(deps.store, request.params.id),
  );

  app.delete<{ Params: Static<typeof IdParams> }>(
    '/v1/identities/:id/passkeys',
    {
      config: { grant: 'direct_auth', action: 'passkeys_reset', auditedInTransaction: true },
      schema: {
        operationId: 'resetIdentityPasskeys',
        summary: "Remove all of an identity's passkeys",
        tags: ['passkeys'],
        description: 'For a lost device. Audited (passkeys_reset) with the number removed.',
        params: IdParams,
        response: responses(
          {
            200: Type.Object(
              { removed: Type.Integer({ description: 'Passkeys removed (0: it had none)' }) },
              { description: 'The passkeys are gone' },
            ),
          },
          [...SERVICE_ERRORS, 404],
        ),
      },
    },
    async (request) => resetPasskeys(deps, actorOf(request.caller), request.params.id),
  );

  app.delete<{ Params: Static<typeof OnePasskeyParams> }>(
    '/v1/identities/:id/passkeys/:passkey_id',
    {
      config: { grant: 'direct_auth', action: 'passkey_delete', auditedInTransaction: true },
      schema: {
        operationId: 'deleteIdentityPasskey',
        summary: "Remove one of an identity's passkeys",
        tags: ['passkeys'],
        description: 'Audited (passkey_delete).',
        params: OnePasskeyParams,
        response: responses({ 204: NoContent('Removed') }, [...SERVICE_ERRORS, 404]),
      },
    },
    async (request, reply) => {
      await deletePasskey(
        deps,
        actorOf(request.caller),
        request.params.id,
        request.params.passkey_id,
      );
      return reply.code(204).send();
    },
  );
}
