import { type Static, type TProperties, Type } from '@sinclair/typebox';
import { FLOW_METHODS, type FlowMethodSurface, SECOND_FACTOR_SURFACES } from './flow-methods.js';
import { IdParams, SessionSchema, StringEnum, Timestamp } from './schemas.js';

/*
 * The flow routes' schemas and shared route settings, for every page family built on
 * flows (login, second factor, registration, recovery, verification, providers) and the
 * OpenAPI document.
 */

export const FlowSchema = Type.Object(
  {
    id: Type.String({ description: 'Flow id (tess_f_…)' }),
    flow_id: Type.String({ description: 'Same as id' }),
    return_to: Type.Union([Type.String(), Type.Null()]),
    state: StringEnum(['created', 'second_factor_required', 'completed', 'failed', 'expired']),
    issued_at: Timestamp,
    expires_at: Timestamp,
    second_factor: Type.Optional(
      Type.Object(
        { methods: Type.Array(Type.String()) },
        {
          description:
            'Only in state second_factor_required: the methods that complete the flow (POST /v1/flows/{id}/<method>)',
        },
      ),
    ),
  },
  { description: 'A login flow, without its CSRF token.' },
);
export const StartedFlowSchema = Type.Intersect(
  [FlowSchema, Type.Object({ csrf_token: Type.String() })],
  { description: 'A new login flow and the CSRF token its submission needs.' },
);
export const FlowErrorSchema = Type.Object({
  error: Type.String({ description: 'The error code of a failed submission' }),
  at: Timestamp,
});
export const FlowDetailSchema = Type.Intersect(
  [
    FlowSchema,
    Type.Object({
      csrf_token: Type.Optional(
        Type.String({
          description:
            'Only to the login UI (SERVICE_LOGIN_UI_URL): its Origin, in the browser the flow was started in',
        }),
      ),
      errors: Type.Array(FlowErrorSchema),
    }),
  ],
  { description: 'A login flow and its failed submissions, newest last.' },
);
export const SubmitResultSchema = Type.Object({
  return_to: Type.Union([Type.String(), Type.Null()]),
  session: SessionSchema,
});

export const ChallengeBody = Type.Object(
  { csrf_token: Type.Optional(Type.String({ description: 'From GET /v1/login' })) },
  { additionalProperties: false },
);
export const ChallengeOptionsSchema = Type.Object(
  {
    options: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'The WebAuthn options JSON to pass to the browser (PublicKeyCredential.parseRequestOptionsFromJSON, or @simplewebauthn/browser as optionsJSON)',
    }),
  },
  { description: 'A challenge for the flow and the options around it.' },
);
/** A challenge's body: the method's challenge fields, if any, and the CSRF token. */
const challengeBody = (fields: TProperties) =>
  Type.Object(
    { ...fields, csrf_token: ChallengeBody.properties.csrf_token },
    { additionalProperties: false },
  );
/**
 * The challenge bodies of the methods whose challenge takes fields, built once: the OpenAPI
 * document names them. The others take `ChallengeBody`.
 */
export const CHALLENGE_BODIES = new Map<string, ReturnType<typeof challengeBody>>(
  FLOW_METHODS.flatMap(({ method, challenge }) =>
    challenge?.fields ? [[method.id, challengeBody(challenge.fields)] as const] : [],
  ),
);
export const submitBody = (surface: Pick<FlowMethodSurface, 'fields'>) =>
  Type.Object(
    {
      ...surface.fields,
      csrf_token: Type.Optional(Type.String({ description: 'From GET /v1/login; body only' })),
    },
    { additionalProperties: false },
  );
export type SubmitRoute = {
  Params: Static<typeof IdParams>;
  Body: { csrf_token?: string } & Record<string, unknown>;
};

/**
 * Each flow method's submission body, built once: the OpenAPI document names them. The
 * second factors' routes add theirs (second-factor-flows.ts).
 */
export const SUBMIT_BODIES = new Map<string, ReturnType<typeof submitBody>>(
  [...FLOW_METHODS, ...SECOND_FACTOR_SURFACES].map(
    (surface) => [surface.method.id, submitBody(surface)] as const,
  ),
);

/** `recovery_code` -> `RecoveryCode`: operation ids and component names. */
export function pascalCase(id: string): string {
  return id
    .split('_')
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
}

/** Statuses the proxy header and the stores can add to any browser endpoint. */
export const BROWSER_ERRORS = [401, 403, 422, 503, 504];
/** The bearer token is optional: only a browser_proxy stating the client address sends one. */
export const OPTIONAL_SERVICE_TOKEN: Record<string, string[]>[] = [{}, { serviceToken: [] }];
