import type { ServiceTokenRecord } from '../service-tokens/service-token.js';
import type { IdentityRecord, IdentityState, IdentitySummary } from './identity.js';

/** A service's question about an identity, read at once (`findCallerAndIdentity`). */
export interface CallerAndIdentity {
  serviceToken: ServiceTokenRecord | undefined;
  identity: IdentityRecord | undefined;
}

/** What an identity lookup names it by: `GET /v1/identities/{id}`, `?username=`, `?email=`. */
export type IdentityKey = 'id' | 'username' | 'email';

export interface ProfilePatch {
  display_name?: string;
  avatar_url?: string | null;
}

export interface IdentityListQuery {
  /** Only identities in this state; every state when absent. */
  state?: IdentityState;
  limit: number;
}

/**
 * Persistence the identities module needs. Adapters throw UniqueViolation on a taken
 * username or email address (a UNIQUE index each, so races settle in the database).
 */
export interface IdentityStore {
  insertIdentity(record: IdentityRecord): Promise<void>;
  findIdentityById(id: string): Promise<IdentityRecord | undefined>;
  /**
   * `findServiceTokenByHash` and `findIdentityById` (`ByUsername`, `ByEmail`) together, for
   * a service asking about an identity (`GET /v1/identities/{id}`, `?username=`, `?email=`):
   * one round trip on PostgreSQL.
   */
  findCallerAndIdentity(
    serviceTokenHash: string,
    by: IdentityKey,
    value: string,
  ): Promise<CallerAndIdentity>;
  findIdentityByUsername(username: string): Promise<IdentityRecord | undefined>;
  /** By canonical address (email.ts). */
  findIdentityByEmail(email: string): Promise<IdentityRecord | undefined>;
  /** Sets or clears the address; `verifiedAt` null leaves it unverified. */
  setIdentityEmail(
    id: string,
    email: string | null,
    verifiedAt: number | null,
    updatedAt: number,
  ): Promise<IdentityRecord | undefined>;
  updateIdentityProfile(
    id: string,
    patch: ProfilePatch,
    updatedAt: number,
  ): Promise<IdentityRecord | undefined>;
  setIdentityState(
    id: string,
    state: IdentityState,
    updatedAt: number,
  ): Promise<IdentityRecord | undefined>;
  setIdentityPassword(
    id: string,
    passwordHash: string,
    updatedAt: number,
  ): Promise<IdentityRecord | undefined>;
  /**
   * Swaps the hash only while it is still `expected` (a password set meanwhile wins);
   * `updated_at` stays: the password is the same. Returns whether it swapped.
   */
  replacePasswordHash(id: string, expected: string, next: string): Promise<boolean>;
  /**
   * Whether the hash is still `expected`; inside a transaction it stays so until the
   * transaction ends: a password change waits for the commit (PostgreSQL: a share lock on
   * the row; SQLite: the write lock the transaction holds from BEGIN IMMEDIATE). A read:
   * the row is not written.
   */
  holdPasswordHash(id: string, expected: string): Promise<boolean>;
  /** Newest first (created_at, then id); never loads password hashes. */
  listIdentities(query: IdentityListQuery): Promise<IdentitySummary[]>;
}
