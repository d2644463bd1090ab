/**
 * How a Tessera session was made, as OpenID Connect says it: `amr` values from RFC 8176 and
 * an `acr` naming the NIST SP 800-63B authenticator assurance level (docs/oidc.md).
 */
export const ACR_VALUES = ['aal1', 'aal2'] as const;
export type Acr = (typeof ACR_VALUES)[number];

const FIRST_FACTOR_AMR: Record<string, string> = {
  password: 'pwd',
  // Link sign-in: a trusted backend vouches for an identity asserted by another provider.
  link: 'fed',
  // A passkey proves possession of a key (and the authenticator verified the user).
  passkey: 'pop',
  // An upstream provider's sign-in (docs/providers.md): federated, whatever it used itself.
  provider: 'fed',
};

export interface SessionAssurance {
  authenticated_via: string;
  /** Sessions carry `aal` once second factors exist; absent means aal1. */
  aal?: string;
}

export function acrOf(session: SessionAssurance): Acr {
  return session.aal === 'aal2' ? 'aal2' : 'aal1';
}

export function amrOf(session: SessionAssurance): string[] {
  const first = FIRST_FACTOR_AMR[session.authenticated_via] ?? session.authenticated_via;
  return acrOf(session) === 'aal2' && first !== 'pop' ? [first, 'mfa'] : [first];
}
