import swagger from '@fastify/swagger';
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { SESSION_COOKIE } from './cookies.js';
import { FLOW_METHODS } from './flow-methods.js';
import { AccountPasswordBody, AccountProfileBody, AccountProfileSchema } from './routes/account.js';
import { PasswordBody, RegisterBody } from './routes/direct-auth.js';
import { SetPasswordBody } from './routes/identity-credentials.js';
import { EmailBody, ProfileBody, RevokedSchema } from './routes/identities.js';
import { AttachBody, DetachBody, LinkSchema, SignInBody, SignInResponse } from './routes/links.js';
import {
  FlowDetailSchema,
  FlowErrorSchema,
  ChallengeOptionsSchema,
  FlowSchema,
  StartedFlowSchema,
  SUBMIT_BODIES,
  CHALLENGE_BODIES,
  SubmitResultSchema,
  pascalCase,
} from './flow-schemas.js';
import { PasskeySchema } from './routes/account-passkeys.js';
import { Readiness } from './routes/operations.js';
import {
  AccountStatusSchema,
  ConfirmBody,
  EnrolmentSchema,
  RecoveryCodesSchema,
  TwoFactorStatusSchema,
} from './routes/account-two-factor.js';
import { RevokeBody, VerifyBody } from './routes/sessions.js';
import { AccountEmailBody, StartedVerificationSchema } from './routes/account-email.js';
import {
  VerificationResendBody,
  VerificationSchema,
  VerificationSubmitBody,
  VerifiedSchema,
} from './routes/verification.js';
import {
  AcceptedRecoveryCodeSchema,
  RecoveryCodeBody,
  RecoveryCompleteBody,
  RecoveryEmailBody,
  RecoveryFlowSchema,
} from './routes/recovery.js';
import {
  PasskeySignUpBody,
  PasskeySignUpOptionsBody,
  PasswordSignUpBody,
  RegistrationFlowSchema,
  SignUpResultSchema,
} from './routes/registration.js';
import { ErrorSchema, IdentitySchema, MintedSessionSchema, SessionSchema } from './schemas.js';
import { AccountSessionSchema, SessionListItemSchema } from './session-list.js';

/**
 * The schemas the document names, by object identity. Routes embed the schema objects
 * themselves (Fastify compiles inline schemas faster than `$ref`s, and startup pays for it
 * in every test), so naming is a property of the document only: wherever one of these
 * objects appears, the document has a `$ref` to its component instead of a copy.
 */
const COMPONENTS = new Map<TSchema, string>([
  [IdentitySchema, 'Identity'],
  [SessionSchema, 'Session'],
  [MintedSessionSchema, 'MintedSession'],
  [ErrorSchema, 'Error'],
  [LinkSchema, 'Link'],
  [SignInResponse, 'LinkSignInResult'],
  [FlowSchema, 'Flow'],
  [StartedFlowSchema, 'StartedFlow'],
  [FlowErrorSchema, 'FlowError'],
  [FlowDetailSchema, 'FlowWithErrors'],
  [SubmitResultSchema, 'CompletedFlow'],
  [RevokedSchema, 'RevokedSessions'],
  [Readiness, 'Readiness'],
  [PasskeySchema, 'Passkey'],
  [ChallengeOptionsSchema, 'WebAuthnOptions'],
  [RegisterBody, 'Registration'],
  [PasswordBody, 'PasswordCredentials'],
  [ProfileBody, 'ProfileUpdate'],
  [EmailBody, 'EmailChange'],
  [VerifyBody, 'SessionVerification'],
  [RevokeBody, 'SessionRevocation'],
  [SignInBody, 'LinkSignIn'],
  [AttachBody, 'LinkAttachment'],
  [DetachBody, 'LinkKey'],
  [SessionListItemSchema, 'SessionListItem'],
  [AccountSessionSchema, 'AccountSession'],
  [AccountProfileSchema, 'AccountProfile'],
  [AccountProfileBody, 'AccountProfileUpdate'],
  [AccountPasswordBody, 'AccountPasswordChange'],
  [SetPasswordBody, 'PasswordSetting'],
  [TwoFactorStatusSchema, 'TwoFactorStatus'],
  [AccountStatusSchema, 'AccountTwoFactor'],
  [EnrolmentSchema, 'TotpEnrolment'],
  [RecoveryCodesSchema, 'RecoveryCodes'],
  [ConfirmBody, 'TotpConfirmation'],
  [VerificationSchema, 'Verification'],
  [VerificationSubmitBody, 'VerificationSubmission'],
  [VerificationResendBody, 'VerificationResend'],
  [VerifiedSchema, 'CompletedVerification'],
  [RecoveryFlowSchema, 'RecoveryFlow'],
  [AcceptedRecoveryCodeSchema, 'AcceptedRecoveryCode'],
  [RecoveryEmailBody, 'RecoveryEmailSubmission'],
  [RecoveryCodeBody, 'RecoveryCodeSubmission'],
  [RecoveryCompleteBody, 'RecoveryCompletion'],
  [AccountEmailBody, 'AccountEmailChange'],
  [StartedVerificationSchema, 'StartedVerification'],
  [RegistrationFlowSchema, 'RegistrationFlow'],
  [PasswordSignUpBody, 'PasswordSignUp'],
  [PasskeySignUpOptionsBody, 'PasskeySignUpProfile'],
  [PasskeySignUpBody, 'PasskeySignUp'],
  [SignUpResultSchema, 'CompletedSignUp'],
  ...[...SUBMIT_BODIES].map(([id, body]) => [body, `Flow${pascalCase(id)}Submission`] as const),
  ...[...CHALLENGE_BODIES].map(([id, body]) => [body, `Flow${pascalCase(id)}Request`] as const),
  ...FLOW_METHODS.flatMap(({ method, challenge }) =>
    challenge?.response ? [[challenge.response, `${pascalCase(method.id)}Challenge`] as const] : [],
  ),
]);

/** A copy of `node` with every named schema below it (and `node` itself unless `keep`) as a `$ref`. */
function withRefs(node: unknown, keep = false): unknown {
  if (Array.isArray(node)) return node.map((item) => withRefs(item));
  if (node === null || typeof node !== 'object') return node;
  const name = keep ? undefined : COMPONENTS.get(node as TSchema);
  if (name !== undefined) {
    // The description next to the `$ref` names a response; inside a schema it is dropped.
    const { description } = node as { description?: string };
    return { $ref: `#/components/schemas/${name}`, ...(description && { description }) };
  }
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, withRefs(value)]));
}

const TAGS = [
  { name: 'identities', description: 'Identities: registration, lookup, profile' },
  { name: 'sessions', description: 'Sessions: password sign-in, verification, revocation' },
  { name: 'links', description: 'External accounts (provider, subject) linked to identities' },
  { name: 'flows', description: 'Browser login flows and the hosted login page' },
  { name: 'browser', description: 'The browser session in the service_session cookie' },
  {
    name: 'account',
    description: 'The signed-in user’s own account: the hosted pages and their JSON API',
  },
  { name: 'passkeys', description: "Operators: an identity's passkeys" },
  { name: 'operations', description: 'Liveness, readiness, metrics and this document' },
];

/**
 * `GET /v1/openapi.json`, generated from the route schemas. A route's service grant
 * (`config.grant`) is what makes it a service route, so the bearer requirement is derived
 * from it here rather than restated per route: no service route can be left without it.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  const schemas = Object.fromEntries(
    [...COMPONENTS].map(([schema, name]) => [name, withRefs(schema, true)]),
  );
  await app.register(swagger, {
    openapi: {
      info: {
        title: 'Tessera',
        version: '1',
        description: 'Identity and session service',
        license: { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' },
      },
      servers: [{ url: '/', description: 'This Tessera' }],
      tags: TAGS,
      components: {
        schemas: schemas as Record<string, object>,
        securitySchemes: {
          serviceToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'A service token (tess_svc_…) from `tessera svc create`',
          },
          sessionCookie: {
            type: 'apiKey',
            in: 'cookie',
            name: SESSION_COOKIE,
            description: 'The browser session cookie set by a completed login flow',
          },
        },
      },
    },
    transform: ({ schema, url, route }) => {
      const documented = withRefs(schema) as typeof schema;
      const grant = route.config?.grant;
      if (!grant) return { schema: documented, url };
      const description = [schema.description, `Requires the \`${grant}\` grant.`]
        .filter(Boolean)
        .join(' ');
      return { schema: { ...documented, description, security: [{ serviceToken: [] }] }, url };
    },
  });
}
