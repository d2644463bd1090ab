import type { LinkRecord } from './link.js';

export interface LinkStore {
  /** Throws UniqueViolation when the (provider, subject) pair is already owned. */
  insertLink(record: LinkRecord): Promise<void>;
  findLink(provider: string, subject: string): Promise<LinkRecord | undefined>;
  /** Sets verified_at only where it is null: a link is never un-verified. */
  markLinkVerified(provider: string, subject: string, at: number): Promise<void>;
  listLinks(identityId: string): Promise<LinkRecord[]>;
  /** Deletes only when the pair belongs to `identityId`; returns whether a row went. */
  deleteLink(identityId: string, provider: string, subject: string): Promise<boolean>;
}
