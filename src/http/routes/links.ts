import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { attachLink, detachLink, listIdentityLinks } from '../../domain/links/link-service.js';
import { signInWithLink } from '../../domain/sign-in/link/link-sign-in.js';
import type { AppDeps } from '../deps.js';
import { statedDevice } from '../device.js';
import {
  IdParams,
  MintedSessionSchema,
  NoContent,
  SERVICE_ERRORS,
  StatedDeviceHeaders,
  Timestamp,
  responses,
} from '../schemas.js';
import { actorOf } from '../service-auth.js';

// Lengths are checked in the domain in bytes of UTF-8 (docs/api.md 2.2); a JSON Schema
// maxLength would count characters and let 255 multi-byte characters through.
const KeyPart = (what: string) =>
  Type.String({ description: `${what}: opaque, 1-255 bytes of UTF-8, matched exactly` });

export const LinkSchema = Type.Object(
  {
    provider: Type.String(),
    subject: Type.String(),
    identity_id: Type.String({ format: 'uuid' }),
    verified_at: Type.Union([Timestamp, Type.Null()]),
    linked_at: Timestamp,
  },
  { description: 'An external account (provider, subject) linked to an identity.' },
);

export const SignInBody = Type.Object(
  {
    provider: KeyPart('provider'),
    subject: KeyPart('subject'),
    seed: Type.Optional(
      Type.Unknown({
        description:
          '{ "username": string, "display_name": string }: used, and validated, only when the pair is not linked yet',
      }),
    ),
  },
  { additionalProperties: false },
);

export const SignInResponse = Type.Intersect(
  [MintedSessionSchema, Type.Object({ created: Type.Boolean() })],
  { description: 'A new session; `created` when the identity is new.' },
);

export const AttachBody = Type.Object(
  {
    provider: KeyPart('provider'),
    subject: KeyPart('subject'),
    verified: Type.Optional(Type.Boolean({ default: false })),
  },
  { additionalProperties: false },
);

export const DetachBody = Type.Object(
  { provider: KeyPart('provider'), subject: KeyPart('subject') },
  { additionalProperties: false },
);

type IdRoute = { Params: Static<typeof IdParams> };

export function linkRoutes(app: FastifyInstance, deps: AppDeps): void {
  app.post<{ Body: Static<typeof SignInBody> }>(
    '/v1/authenticate/link',
    {
      config: { grant: 'external_auth', action: 'authenticate_link', auditedInTransaction: true },
      schema: {
        operationId: 'authenticateLink',
        summary: 'Sign in with a linked external account',
        tags: ['links'],
        description:
          'Sign in by (provider, subject). 200 for a returning user; 201 when the identity is created from the seed.',
        headers: StatedDeviceHeaders,
        body: SignInBody,
        response: responses({ 200: SignInResponse, 201: SignInResponse }, [
          ...SERVICE_ERRORS,
          404,
          409,
        ]),
      },
    },
    async (request, reply) => {
      const result = await signInWithLink(
        deps,
        actorOf(request.caller),
        request.body,
        request.audit!,
        statedDevice(request, request.caller),
      );
      return reply.code(result.created ? 201 : 200).send(result);
    },
  );

  app.post<IdRoute & { Body: Static<typeof AttachBody> }>(
    '/v1/identities/:id/links',
    {
      config: { grant: 'external_link', action: 'link_attach', auditedInTransaction: true },
      schema: {
        operationId: 'createLink',
        summary: 'Link an external account to an identity',
        tags: ['links'],
        params: IdParams,
        body: AttachBody,
        response: responses({ 201: LinkSchema }, [...SERVICE_ERRORS, 404]),
      },
    },
    async (request, reply) => {
      const link = await attachLink(
        deps,
        actorOf(request.caller),
        request.params.id,
        request.body,
        request.audit!,
      );
      return reply.code(201).send(link);
    },
  );

  app.get<IdRoute>(
    '/v1/identities/:id/links',
    {
      config: { grant: 'identity_read', action: 'link_list' },
      schema: {
        operationId: 'listLinks',
        summary: "List an identity's linked accounts",
        tags: ['links'],
        params: IdParams,
        response: responses(
          { 200: Type.Array(LinkSchema, { description: "The identity's links" }) },
          [...SERVICE_ERRORS, 404],
        ),
      },
    },
    async (request) => listIdentityLinks(deps.store, request.params.id),
  );

  app.delete<IdRoute & { Body: Static<typeof DetachBody> }>(
    '/v1/identities/:id/links',
    {
      config: { grant: 'external_link', action: 'link_detach', auditedInTransaction: true },
      schema: {
        operationId: 'deleteLink',
        summary: 'Unlink an external account from an identity',
        tags: ['links'],
        params: IdParams,
        body: DetachBody,
        response: responses({ 204: NoContent('Unlinked') }, [...SERVICE_ERRORS, 404]),
      },
    },
    async (request, reply) => {
      await detachLink(
        deps,
        actorOf(request.caller),
        request.params.id,
        request.body,
        request.audit!,
      );
      return reply.code(204).send();
    },
  );
}
