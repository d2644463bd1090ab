import type { IdentityRecord, IdentityState } from './identity.js';

export interface ProfilePatch {
  display_name?: string;
  avatar_url?: string | null;
}

/** Persistence the identities module needs. Adapters throw UniqueViolation on a taken username. */
export interface IdentityStore {
  insertIdentity(record: IdentityRecord): Promise<void>;
  findIdentityById(id: string): Promise<IdentityRecord | undefined>;
  findIdentityByUsername(username: string): Promise<IdentityRecord | undefined>;
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
}
