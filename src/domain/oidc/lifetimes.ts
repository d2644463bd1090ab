/**
 * Lifetimes of what the provider issues, in seconds (docs/oidc.md, "Lifetimes"). Refresh
 * tokens rotate on every use, each new one living this long again, up to the grant's.
 */
export const OIDC_TTL_SECONDS = {
  AuthorizationCode: 60,
  AccessToken: 60 * 60,
  IdToken: 60 * 60,
  RefreshToken: 14 * 24 * 60 * 60,
  Grant: 14 * 24 * 60 * 60,
  Session: 14 * 24 * 60 * 60,
  Interaction: 60 * 60,
} as const;

/** A retired key stays published this long: an ID token it signed lives at most IdToken. */
export const SIGNING_KEY_RETENTION_MS = (OIDC_TTL_SECONDS.IdToken + 10 * 60) * 1000;
