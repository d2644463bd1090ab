import { type TSchema, type TUnsafe, Type } from '@sinclair/typebox';
import type { ErrorCode } from '../domain/errors.js';
import { CLIENT_IP_HEADER } from './client-address.js';
import { CLIENT_USER_AGENT_HEADER } from './device.js';
import { ERROR_STATUS } from './errors.js';
import { SIGN_IN_METHOD_IDS } from '../domain/sign-in/methods.js';
import { RECOVERY_SIGN_IN } from '../domain/sessions/session.js';

/**
 * Response and body schemas: validation, serialization and OpenAPI from one source.
 *
 * Routes use the schemas inline, as Fastify compiles them fastest; the OpenAPI document
 * names the shared ones as components (src/http/openapi.ts) and refers to them by `$ref`.
 */

/** One `enum` keyword, which generators turn into a union type (an anyOf of consts is not). */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: { description?: string } = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

export const Timestamp = Type.String({ format: 'date-time' });

export const IdentitySchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    username: Type.String(),
    display_name: Type.String(),
    avatar_url: Type.Union([Type.String(), Type.Null()]),
    email: Type.Union([Type.String(), Type.Null()], {
      description:
        'Lowercased, the domain in punycode (docs/api.md, "Email addresses"); unique among identities',
    }),
    email_verified: Type.Boolean({ description: 'False whenever email is null' }),
    state: StringEnum(['active', 'disabled']),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { description: 'An identity; never carries a password hash.' },
);

export const SessionSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    identity: IdentitySchema,
    issued_at: Timestamp,
    expires_at: Timestamp,
    authenticated_via: StringEnum([...SIGN_IN_METHOD_IDS, RECOVERY_SIGN_IN]),
    aal: StringEnum(['aal1', 'aal2'] as const, {
      description:
        'Assurance reached: aal1 one factor, aal2 a second factor too (docs/two-factor.md)',
    }),
  },
  { description: 'A session and the identity it belongs to.' },
);

export const MintedSessionSchema = Type.Object(
  {
    session: SessionSchema,
    token: Type.String({ description: 'Raw session token (tess_s_…), shown once' }),
  },
  { description: 'A new session and its token, which no later answer repeats.' },
);

/**
 * Codes no route answers: the transport's answers to requests that are not HTTP/1.1 or did
 * not arrive in time (http/client-errors.ts), and a bug's 500.
 */
const OUTSIDE_ROUTES = { bad_request: 400, request_timeout: 408, internal_error: 500 } as const;

/** Every code an error answer of the process carries (docs/errors.md). */
export const ERROR_CODES = [
  ...(Object.keys(ERROR_STATUS) as ErrorCode[]),
  ...(Object.keys(OUTSIDE_ROUTES) as (keyof typeof OUTSIDE_ROUTES)[]),
] as const;

export const ErrorSchema = Type.Object(
  {
    error: StringEnum(ERROR_CODES),
    message: Type.Optional(
      Type.String({
        description:
          'On validation_error; on forbidden when the refusal has something to explain (a second factor is needed, a recent sign-in)',
      }),
    ),
    retry_after: Type.Optional(
      Type.Integer({ description: 'Only on rate_limited: seconds until a retry can succeed' }),
    ),
  },
  { description: 'The flat error model: a documented code, nothing else.' },
);

export const IdParams = Type.Object({ id: Type.String() });

/** The header a browser_proxy caller states the end user's address in, for per-IP limits. */
export const ClientIpHeader = Type.Object({
  [CLIENT_IP_HEADER]: Type.Optional(
    Type.String({
      description:
        "The end user's IP address. Only a caller holding the browser_proxy grant may state it (with its bearer token); anyone else is refused.",
    }),
  ),
});

const ClientUserAgent = Type.Optional(
  Type.String({
    description:
      "The end user's User-Agent, recorded on the new session for the session lists (docs/account.md).",
  }),
);

/** A service sign-in that also reads the per-IP limit's header: the address and the user agent. */
export const ClientDeviceHeaders = Type.Object({
  ...ClientIpHeader.properties,
  [CLIENT_USER_AGENT_HEADER]: ClientUserAgent,
});

/** A service sign-in that has no per-IP limit: what it records on the session, if stated. */
export const StatedDeviceHeaders = Type.Object({
  [CLIENT_IP_HEADER]: Type.Optional(
    Type.String({
      description:
        "The end user's IP address, recorded on the new session when the caller holds browser_proxy (ignored otherwise).",
    }),
  ),
  [CLIENT_USER_AGENT_HEADER]: ClientUserAgent,
});

/** The hosted pages: a complete HTML document. */
const HtmlPage = Type.String({ description: 'The hosted page (HTML)' });

const STATUS_TEXT: Record<number, string> = {
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  422: 'Invalid input',
  429: 'Too many attempts',
  500: 'Internal error (a bug)',
  503: 'Unavailable: the database cannot serve now; retry later',
  504: 'Timeout: the database did not answer in time; retry later',
};

function errorDescription(status: number): string {
  const codes = ERROR_CODES.filter(
    (code) =>
      (code in OUTSIDE_ROUTES
        ? OUTSIDE_ROUTES[code as keyof typeof OUTSIDE_ROUTES]
        : ERROR_STATUS[code as ErrorCode]) === status,
  );
  return `${STATUS_TEXT[status] ?? 'Error'}: ${codes.map((code) => `\`${code}\``).join(', ')}`;
}

/**
 * The error model at `status`, as JSON, or as JSON or a hosted page for browser routes.
 * Always a media-type map, so the response carries its own description while its schema
 * stays the shared `ErrorSchema` object (named `Error` in the document).
 */
function errorResponse(status: number, html: boolean): TSchema {
  const content: Record<string, { schema: TSchema }> = {
    'application/json': { schema: ErrorSchema },
  };
  if (html) content['text/html'] = { schema: HtmlPage };
  return Type.Unsafe({ description: errorDescription(status), content });
}

/**
 * A route's response map: its own answers, the error model at each listed status, and 500.
 * With `html`, every error may also come as the hosted page (browser form posts and
 * navigations). A test hook fails any answer whose status is missing here.
 */
export function responses(
  success: Record<number, TSchema>,
  errorStatuses: number[],
  options: { html?: boolean } = {},
): Record<number, TSchema> {
  const map: Record<number, TSchema> = { ...success };
  for (const status of [...errorStatuses, 500]) {
    map[status] = errorResponse(status, options.html ?? false);
  }
  return map;
}

/** A JSON answer with its own description, whose schema stays the shared object. */
export function json(schema: TSchema, description: string): TSchema {
  return Type.Unsafe({ description, content: { 'application/json': { schema } } });
}

/** A 200 that is JSON to API clients and the hosted page to a browser. */
export function jsonOrPage(json: TSchema, description: string): TSchema {
  return Type.Unsafe({
    description,
    content: { 'application/json': { schema: json }, 'text/html': { schema: HtmlPage } },
  });
}

/** A 303 to the URL in `Location`, with no body. */
export function seeOther(description: string): TSchema {
  return Type.Null({
    description,
    headers: { location: { type: 'string', description: 'Where the browser goes next' } },
  });
}

export const NoContent = (description: string) => Type.Null({ description });

/** Statuses every service route can answer besides its own. */
export const SERVICE_ERRORS = [401, 403, 422, 503, 504];
