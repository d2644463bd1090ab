import type { AuditLog } from '../domain/audit/audit-log.js';
import type { RelyingPartySettings, WebAuthn } from '../domain/passkeys/webauthn.js';
import type { PasswordHasher } from '../domain/passwords/password-hasher.js';
import type { PasswordPolicy } from '../domain/password-policy/policy.js';
import type { StoreHandle } from '../storage/store.js';
import type { Clock } from '../lib/clock.js';
import type { Config } from '../config.js';
import type { RateLimitRule } from '../lib/rate.js';
import type { SecretBox } from '../lib/secret-box.js';

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
  usernameRule: RateLimitRule;
}
