import type { IdentityRecord, IdentityState } from '../identities/identity.js';
import type { LinkKey, LinkRecord } from '../links/link.js';
import type { TotpFactorRecord } from '../second-factor/second-factor-store.js';

export interface ExportPageQuery {
  /** The page starts after this id; null for the first page. */
  afterId: string | null;
  state?: IdentityState;
  limit: number;
}

/** How many identities (of one state, or all) hold each credential an export cannot carry. */
export interface CredentialHolders {
  /** A confirmed TOTP factor. */
  totp: number;
  /** At least one unused recovery code. */
  recovery_codes: number;
  passkeys: number;
}

/** Persistence of bulk import and export (`identity import`, `identity export`). */
export interface TransferStore {
  /** Which of these canonical usernames exist. */
  existingUsernames(usernames: string[]): Promise<string[]>;
  /** Which of these canonical email addresses identities have. */
  existingEmails(emails: string[]): Promise<string[]>;
  /** Which of these identity ids exist. */
  existingIdentityIds(ids: string[]): Promise<string[]>;
  /** Which of these links exist, whoever owns them. */
  existingLinks(keys: LinkKey[]): Promise<LinkKey[]>;
  /** Multi-row inserts; a taken username, email, id or link throws UniqueViolation. */
  insertIdentities(records: IdentityRecord[]): Promise<void>;
  insertLinks(records: LinkRecord[]): Promise<void>;
  /** Authenticators carried by an import, sealed and confirmed. */
  insertTotpFactors(records: TotpFactorRecord[]): Promise<void>;
  /** Identities ordered by id, password hashes included. */
  exportPage(query: ExportPageQuery): Promise<IdentityRecord[]>;
  /** The links of these identities, oldest first within each. */
  linksOf(identityIds: string[]): Promise<LinkRecord[]>;
  credentialHolders(query: { state?: IdentityState }): Promise<CredentialHolders>;
}
