import { type TSchema, Type } from '@sinclair/typebox';
import { SIGN_IN_METHODS } from '../domain/sign-in/methods.js';

/** Response and body schemas: validation, serialization and OpenAPI from one source. */

const Timestamp = Type.String({ format: 'date-time' });

export const IdentitySchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  username: Type.String(),
  display_name: Type.String(),
  avatar_url: Type.Union([Type.String(), Type.Null()]),
  state: Type.Union([Type.Literal('active'), Type.Literal('disabled')]),
  created_at: Timestamp,
  updated_at: Timestamp,
});

export const SessionSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  identity: IdentitySchema,
  issued_at: Timestamp,
  expires_at: Timestamp,
  authenticated_via: Type.Union(SIGN_IN_METHODS.map(({ id }) => Type.Literal(id))),
});

export const MintedSessionSchema = Type.Object({
  session: SessionSchema,
  token: Type.String({ description: 'Raw session token (tess_s_…), shown once' }),
});

export const ErrorSchema = Type.Object({
  error: Type.String(),
  message: Type.Optional(Type.String()),
  retry_after: Type.Optional(Type.Number()),
});

export const IdParams = Type.Object({ id: Type.String() });

/** Response map for a route: its success schemas plus the error model for every status listed. */
export function responses(
  success: Record<number, TSchema>,
  errorStatuses: number[],
): Record<number, TSchema> {
  const map: Record<number, TSchema> = { ...success };
  for (const status of errorStatuses) map[status] = ErrorSchema;
  return map;
}

/** Statuses every service route can answer besides its own. */
export const SERVICE_ERRORS = [401, 403, 422, 503, 504];
