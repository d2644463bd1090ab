import type { LinkRecord } from './link.js';

/** Persistence the links module needs. The (provider, subject) primary key settles every race. */
export interface LinkStore {
  /** Throws UniqueViolation when the (provider, subject) pair is already owned. */
  insertLink(record: LinkRecord): Promise<void>;
  /**
   * Inserts the link unless the pair is already owned (by anyone); returns whether it did.
   * Unlike `insertLink` it leaves an open transaction usable on PostgreSQL, where a failed
   * statement aborts the transaction. A concurrent uncommitted insert of the same pair is
   * waited for, never overtaken.
   */
  claimLink(record: LinkRecord): Promise<boolean>;
  findLink(provider: string, subject: string): Promise<LinkRecord | undefined>;
  /**
   * Sets verified_at to `at` where it is null (a link is never un-verified, and its first
   * confirmation time is kept); returns the link afterwards, undefined when it is gone.
   */
  markLinkVerified(provider: string, subject: string, at: number): Promise<LinkRecord | undefined>;
  /** Oldest first by linked_at; ties within one millisecond by provider, then subject. */
  listLinks(identityId: string): Promise<LinkRecord[]>;
  /** Deletes only when the pair belongs to `identityId`; returns whether a row went. */
  deleteLink(identityId: string, provider: string, subject: string): Promise<boolean>;
}
