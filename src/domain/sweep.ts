import type { Clock } from '../lib/clock.js';
import { MAIL_CODE_RETENTION_MS } from './mail-codes/mail-codes.js';
import { SIGNING_KEY_RETENTION_MS } from './oidc/lifetimes.js';
import { deleteExpiredSigningKeys } from './oidc/signing-keys.js';
import type { Store } from './store.js';

export interface SweepResult {
  sessions: number;
  flows: number;
  rate_limits: number;
  /** Passkey challenges never answered (those of swept flows and sessions go with them). */
  webauthn_challenges: number;
  /** Mailed codes (verification) expired more than a day ago, whatever their state. */
  mail_codes: number;
  /** Provider authorization requests whose browser never came back (docs/providers.md). */
  provider_authorizations: number;
  /** Only when OIDC is on: expired provider models (codes, tokens, sessions, grants...). */
  /** Recovery flows past their expiry. */
  recovery_flows: number;
  oidc_models?: number;
  /** Only when OIDC is on: signing keys that left the JWKS. */
  oidc_keys?: number;
}

/**
 * Deletes what can never be valid again: expired sessions (revoked ones included), flows,
 * counters, passkey challenges, mailed codes a day after they expired, and with OIDC on (SERVICE_OIDC_ISSUER) the provider's expired models and keys.
 */
export async function sweep(
  store: Store,
  clock: Clock,
  options: { oidc?: boolean } = {},
): Promise<SweepResult> {
  const now = clock.now();
  const result: SweepResult = {
    sessions: await store.deleteExpiredSessions(now),
    flows: await store.deleteExpiredFlows(now),
    rate_limits: await store.deleteExpiredRateLimits(now),
    webauthn_challenges: await store.deleteExpiredWebAuthnChallenges(now),
    mail_codes: await store.deleteExpiredMailCodes(now - MAIL_CODE_RETENTION_MS),
    provider_authorizations: await store.deleteExpiredProviderAuthorizations(now),
    recovery_flows: await store.deleteExpiredRecoveryFlows(now),
  };
  if (options.oidc) {
    result.oidc_models = await store.deleteExpiredOidcModels(now);
    result.oidc_keys = await deleteExpiredSigningKeys(store, now, SIGNING_KEY_RETENTION_MS);
  }
  return result;
}
