import type { AuditRecord } from '../domain/audit/audit.js';
import type { IdentityRecord } from '../domain/identities/identity.js';
import type { RateLimitHit } from '../domain/rate-limit/rate-limit-store.js';
import type { ServiceTokenRecord } from '../domain/service-tokens/service-token.js';
import type { SessionDevice, SessionRecord } from '../domain/sessions/session.js';
import type { FlowErrorRecord, FlowRecord } from '../domain/login-flows/flow.js';
import type { LinkRecord } from '../domain/links/link.js';
import type { TokenFormat } from '../lib/tokens.js';
import type {
  RecoveryCodeRecord,
  TotpFactorRecord,
} from '../domain/second-factor/second-factor-store.js';
import type { PasskeyRecord, WebAuthnChallengeRecord } from '../domain/passkeys/passkey.js';
import type { OidcClientRecord } from '../domain/oidc/client.js';
import type { OidcModelRecord } from '../domain/oidc/model.js';
import type { SigningKeyRecord } from '../domain/oidc/signing-keys.js';
import type { OutboxRecord } from '../domain/outbox/outbox.js';
import type { OperatorRecord } from '../domain/admin/admin-store.js';
import type { MailCodeRecord } from '../domain/mail-codes/mail-code.js';
import type { WebhookRecord } from '../domain/webhooks/webhook.js';
import type { ProviderAuthorizationRecord } from '../domain/providers/authorization.js';
import type { RecoveryFlowRecord } from '../domain/recovery/recovery-flow.js';

/**
 * Tables as Kysely sees them; the rows are the domain's records. Every timestamp is
 * epoch milliseconds in a BIGINT column: identical comparisons on SQLite and PostgreSQL
 * and no date parsing on the hot path.
 */
export interface Database {
  identities: IdentityRecord;
  sessions: SessionRecord & SessionDevice & { token_format: TokenFormat };
  service_tokens: ServiceTokenRecord;
  audit_log: AuditRecord;
  rate_limits: RateLimitHit & { key: string };
  flows: FlowRecord & { token_format: TokenFormat };
  flow_errors: FlowErrorRecord;
  links: LinkRecord;
  totp_factors: TotpFactorRecord;
  recovery_codes: RecoveryCodeRecord;
  passkeys: PasskeyRecord;
  webauthn_challenges: WebAuthnChallengeRecord;
  oidc_models: OidcModelRecord;
  oidc_clients: OidcClientRecord;
  oidc_signing_keys: SigningKeyRecord;
  outbox: OutboxRecord;
  operators: OperatorRecord;
  mail_codes: MailCodeRecord;
  webhooks: WebhookRecord;
  provider_authorizations: ProviderAuthorizationRecord;
  recovery_flows: RecoveryFlowRecord;
}
