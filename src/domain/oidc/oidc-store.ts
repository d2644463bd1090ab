import type { IdentityRecord } from '../identities/identity.js';
import type { OidcClientRecord } from './client.js';
import type { OidcModelRecord } from './model.js';
import type { SigningKeyRecord } from './signing-keys.js';

/** The models a client presents: what `findOidcToken` reads with its context. */
export const OIDC_TOKEN_KINDS = ['AccessToken', 'AuthorizationCode', 'RefreshToken'] as const;
export type OidcTokenKind = (typeof OIDC_TOKEN_KINDS)[number];
export const isOidcTokenKind = (kind: string): kind is OidcTokenKind =>
  (OIDC_TOKEN_KINDS as readonly string[]).includes(kind);

/** A single-use model (a code, a rotated refresh token) to mark used at `at`. */
export interface OidcSpend {
  kind: string;
  id: string;
  at: number;
}

export interface OidcTokenRead {
  token: OidcModelRecord;
  grant?: OidcModelRecord;
  session?: OidcModelRecord;
  client?: OidcClientRecord;
  /** The identity the token was issued to (the payload's `accountId`), whatever its state. */
  account?: IdentityRecord;
}

/**
 * What the OpenID Connect provider persists: its models (sessions, grants, codes, tokens,
 * interactions...), the client registry and the signing keys. Every instance reads the
 * same rows, so a code issued by one is redeemed at another.
 */
export interface OidcStore {
  /** Inserts or replaces the model `kind`/`id` (the provider's `upsert`). */
  upsertOidcModel(record: OidcModelRecord): Promise<void>;
  /** The model, unless it expired before `now`. */
  findOidcModel(kind: string, id: string, now: number): Promise<OidcModelRecord | undefined>;
  findOidcModelByUid(kind: string, uid: string, now: number): Promise<OidcModelRecord | undefined>;
  /**
   * The code or token `kind`/`id` and, as of the same read, what the provider looks up next
   * when a client presents it (at the token endpoint, userinfo, introspection): its grant
   * (by `grant_id`), the provider session it is bound to (the payload's `sessionUid`), its
   * client (revoked or not) and the identity it was issued to (the payload's `accountId`).
   * Each as `findOidcModel`/`findOidcModelByUid`/`findOidcClient`/`findIdentityById` would
   * answer it now: absent when it is gone or expired.
   */
  findOidcToken(kind: OidcTokenKind, id: string, now: number): Promise<OidcTokenRead | undefined>;
  findOidcModelByUserCode(
    kind: string,
    userCode: string,
    now: number,
  ): Promise<OidcModelRecord | undefined>;
  /**
   * Marks a single-use model (an authorization code, a rotated refresh token) used at `at`,
   * if nobody has: true for exactly one caller, on every instance (the update's row count
   * decides), false when it was used already or is gone.
   */
  consumeOidcModel(kind: string, id: string, at: number): Promise<boolean>;
  /**
   * A token request's writes in one commit: `spend` consumed as `consumeOidcModel` would,
   * then each of `upserts` as `upsertOidcModel` would. When `spend` was used already (or is
   * gone) nothing is written and the answer is false, for every caller but one on every
   * instance; otherwise true.
   */
  writeOidcModels(spend: OidcSpend | null, upserts: readonly OidcModelRecord[]): Promise<boolean>;
  destroyOidcModel(kind: string, id: string): Promise<void>;
  /** Deletes every model of one grant (the provider's `revokeByGrantId`); the count removed. */
  deleteOidcModelsByGrant(grantId: string): Promise<number>;
  /** Deletes every model issued to one client (revoking a client ends its tokens). */
  deleteOidcModelsByClient(clientId: string): Promise<number>;
  deleteExpiredOidcModels(now: number): Promise<number>;

  insertOidcClient(record: OidcClientRecord): Promise<void>;
  findOidcClient(id: string): Promise<OidcClientRecord | undefined>;
  listOidcClients(): Promise<OidcClientRecord[]>;
  revokeOidcClient(id: string, at: number): Promise<void>;

  insertSigningKey(record: SigningKeyRecord): Promise<void>;
  /** Every key, oldest activation first. */
  listSigningKeys(): Promise<SigningKeyRecord[]>;
  deleteSigningKeys(ids: readonly string[]): Promise<number>;
  /**
   * Replaces a key's sealed private JWK if it is still `previous` (re-sealing under the
   * current encryption key); false when another instance re-sealed it first.
   */
  resealSigningKey(id: string, previous: string, sealed: string): Promise<boolean>;
}
