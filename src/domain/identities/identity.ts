import { toIso } from '../../lib/clock.js';
import { isUuid } from '../../lib/ids.js';
import { notFound, validationError } from '../errors.js';
import { requireText } from '../text.js';

export type IdentityState = 'active' | 'disabled';

export interface IdentityRecord {
  id: string;
  username: string;
  display_name: string;
  avatar_url: string | null;
  /** Canonical (email.ts), unique among identities; null when none is known. */
  email: string | null;
  /** When the address was verified (or vouched for by a backend); null: unverified or none. */
  email_verified_at: number | null;
  state: IdentityState;
  password_hash: string | null;
  created_at: number;
  updated_at: number;
}

/** An identity as listed: everything but the password hash. */
export type IdentitySummary = Omit<IdentityRecord, 'password_hash'>;

/** The public Identity object of docs/api.md 2.1; never carries the password hash. */
export interface Identity {
  id: string;
  username: string;
  display_name: string;
  avatar_url: string | null;
  email: string | null;
  /** False whenever `email` is null. */
  email_verified: boolean;
  state: IdentityState;
  created_at: string;
  updated_at: string;
}

export function toIdentity(record: IdentitySummary): Identity {
  return {
    id: record.id,
    username: record.username,
    display_name: record.display_name,
    avatar_url: record.avatar_url,
    email: record.email,
    email_verified: record.email !== null && record.email_verified_at !== null,
    state: record.state,
    created_at: toIso(record.created_at),
    updated_at: toIso(record.updated_at),
  };
}

const USERNAME_RULE =
  'must be 3-64 characters of a-z, 0-9, ".", "_", "-", "@", "+", starting with a letter or digit';
const USERNAME_PATTERN = /^[a-z0-9][a-z0-9._@+-]{2,63}$/;

/** NFKC then lowercase, so lookups and uniqueness are case- and width-insensitive. */
export function normalizeUsername(raw: string): string {
  return raw.normalize('NFKC').toLowerCase();
}

/** Returns the canonical username, or null when it breaks the rule. */
export function parseUsername(raw: string): string | null {
  const username = normalizeUsername(raw);
  return USERNAME_PATTERN.test(username) ? username : null;
}

export function requireUsername(raw: string, field = 'username'): string {
  const username = parseUsername(raw);
  if (username === null) throw validationError(`${field} ${USERNAME_RULE}`);
  return username;
}

/** Trimmed first, so surrounding whitespace (tabs and newlines too) is dropped, not refused. */
export function requireDisplayName(raw: string, field = 'display_name'): string {
  const name = requireText(field, raw.trim(), 'line');
  const length = [...name].length;
  if (length < 1 || length > 128) {
    throw validationError(`${field} must be 1-128 characters after trimming`);
  }
  return name;
}

export function requireAvatarUrl(raw: string | null): string | null {
  if (raw === null) return null;
  requireText('avatar_url', raw, 'line');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw validationError('avatar_url must be an absolute http: or https: URL');
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || raw.length > 2048) {
    throw validationError('avatar_url must be an http: or https: URL of at most 2048 characters');
  }
  return raw;
}

/** Identity ids are UUIDs: anything else names no identity and never reaches the database. */
export function requireIdentityId(id: string): string {
  if (!isUuid(id)) throw notFound();
  return id;
}
