/**
 * An authorization request in flight: the browser was sent to the provider and has not come
 * back yet. Kept in the database (not in memory), so the callback works on any instance.
 *
 * - `state_hash`: the SHA-256 of the `state` sent upstream; the state itself is only in the
 *   provider's redirect, so a database reader cannot answer a callback.
 * - `browser_hash`: the SHA-256 of the browser's binding cookie (docs/providers.md): a
 *   callback from another browser (a link an attacker got the victim to open, to sign the
 *   victim into the attacker's account) finds nothing.
 * - `sealed`: the PKCE verifier and the nonce, sealed with SERVICE_ENCRYPTION_KEY.
 * - `purpose`: `sign_in` for a login flow (`flow_id`), `connect` for a signed-in identity
 *   adding a provider on its account page (`identity_id`).
 */
export interface ProviderAuthorizationRecord {
  state_hash: string;
  provider_id: string;
  purpose: 'sign_in' | 'connect';
  flow_id: string | null;
  identity_id: string | null;
  browser_hash: string;
  redirect_uri: string;
  sealed: string;
  created_at: number;
  expires_at: number;
}

export interface ProviderAuthorizationStore {
  insertProviderAuthorization(record: ProviderAuthorizationRecord): Promise<void>;
  /**
   * Deletes and returns the request of this state started in this browser, if it has not
   * expired: one conditional DELETE, so of racing callbacks with one state exactly one
   * gets it, on any number of instances.
   */
  takeProviderAuthorization(
    stateHash: string,
    browserHash: string,
    now: number,
  ): Promise<ProviderAuthorizationRecord | undefined>;
  deleteExpiredProviderAuthorizations(now: number): Promise<number>;
  /**
   * Holds the identity's row until the transaction ends (an UPDATE that changes nothing):
   * of racing disconnections of one identity's providers, each counts the ways left only
   * after the one before it committed. False when there is no such identity.
   */
  holdIdentityRow(identityId: string): Promise<boolean>;
}
