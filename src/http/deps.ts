import type { AuditLog } from '../domain/audit/audit-log.js';
import type { LastUseRecorder } from '../domain/sessions/last-use.js';
import type { RelyingPartySettings, WebAuthn } from '../domain/passkeys/webauthn.js';
import type { PasswordHasher } from '../domain/passwords/password-hasher.js';
import type { PasswordPolicy } from '../domain/password-policy/policy.js';
import type { StoreHandle } from '../storage/store.js';
import type { Clock } from '../lib/clock.js';
import type { Config } from '../config.js';
import type { RateLimitRule } from '../lib/rate.js';
import type { SecretBox } from '../lib/secret-box.js';
import type { LegacyTokens } from '../domain/tokens/legacy-tokens.js';
import type { TotpEngine } from '../domain/second-factor/totp.js';
import type { KeyGenerator } from '../domain/oidc/signing-keys.js';
import type { OutboxCounters } from '../domain/outbox/outbox-worker.js';
import type { NoticeSettings } from '../domain/notices/notices.js';
import type { WebhookEmitter } from '../domain/webhooks/webhook-emitter.js';
import type { WebhookTransport } from '../domain/webhooks/webhook-transport.js';
import type { UpstreamProviders } from '../domain/providers/upstream.js';
import type { ProviderSignInCounters } from '../adapters/provider-sign-in-metrics.js';

/** Everything the HTTP adapter needs, built once by the composition root. */
export interface AppDeps {
  config: Config;
  store: StoreHandle;
  clock: Clock;
  hasher: PasswordHasher;
  passwordPolicy: PasswordPolicy;
  audit: AuditLog;
  /** Seals secrets kept at rest and keys MACs such as the account pages' CSRF tokens. */
  secretBox: SecretBox;
  /** The passkey ceremonies (adapters/webauthn.ts) and the relying party they serve. */
  webauthn: WebAuthn;
  relyingParty: RelyingPartySettings;
  sessionTtlMs: number;
  /** Records sessions' last use off the session check's path. */
  lastUse: LastUseRecorder;
  usernameRule: RateLimitRule;
  /** Whether pre-checksum tokens may still be presented (docs/tokens.md). */
  legacyTokens: LegacyTokens;
  /** RFC 6238 codes for the second factor (docs/two-factor.md). */
  totp: TotpEngine;
  /** New signing keys of the OpenID provider (adapters/oidc-signing-key.ts). */
  generateSigningKey: KeyGenerator;
  /** Second-factor codes per identity (SERVICE_RATE_LIMIT_SECOND_FACTOR). */
  secondFactorRule: RateLimitRule;
  /** What this process's outbox worker delivered (serve.ts runs it), for /metrics. */
  outboxCounters: OutboxCounters;
  /** The security notices that are on (SERVICE_MAIL_NOTICES, docs/mail.md). */
  notices: NoticeSettings;
  /** Webhooks (docs/webhooks.md): the audit trail's follower and the receivers' transport. */
  webhooks: { emitter: WebhookEmitter; transport: WebhookTransport };
  /** The upstream providers of SERVICE_PROVIDERS_FILE (docs/providers.md), by id. */
  providers: UpstreamProviders;
  /** Provider callbacks by provider and outcome, for /metrics. */
  providerSignIns: ProviderSignInCounters;
  /** SERVICE_SIGN_IN_EMAIL_CODE: the sign-in method `email_code` is on (docs/email-code.md). */
  signInEmailCode: boolean;
}
