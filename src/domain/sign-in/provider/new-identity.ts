import { newId } from '../../../lib/ids.js';
import { parseEmail } from '../../identities/email.js';
import {
  type IdentityRecord,
  parseUsername,
  requireDisplayName,
} from '../../identities/identity.js';
import type { UpstreamAccount } from '../../providers/upstream.js';
import type { Store } from '../../store.js';

/** Room for a `-<n>` suffix within the 64 characters a username may have. */
const STEM_LENGTH = 56;
/** Suffixes tried before a random one: a crowded stem should not cost a query per taker. */
const NUMBERED_TRIES = 20;

/**
 * The stem of a new identity's username (docs/providers.md, "Who signs in"): the provider's
 * preferred user name, else the address's local part, else the provider's id; NFKC and
 * lowercase, every run of characters a username cannot have turned into one `-`, leading
 * punctuation dropped, cut to 56 characters, and prefixed with the provider's id when that
 * leaves fewer than 3.
 */
export function usernameStem(account: UpstreamAccount, providerId: string): string {
  const raw = account.preferredUsername ?? account.email?.split('@')[0] ?? providerId;
  const cleaned = raw
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^a-z0-9._@+-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, STEM_LENGTH)
    .replace(/-+$/, '');
  const stem =
    cleaned.length >= 3 ? cleaned : `${providerId}-${cleaned || 'user'}`.slice(0, STEM_LENGTH);
  return parseUsername(stem) ?? `${providerId}-user`;
}

/**
 * The stem if it is free, else `<stem>-2`, `-3`, ... up to `-21`, then `<stem>-<6 random
 * digits>`. Read before the transaction that inserts: a name taken in between makes the
 * insert fail (`username_taken`) and the user tries again.
 */
export async function uniqueUsername(
  store: Pick<Store, 'findIdentityByUsername'>,
  stem: string,
): Promise<string> {
  if (!(await store.findIdentityByUsername(stem))) return stem;
  for (let n = 2; n < NUMBERED_TRIES + 2; n += 1) {
    const candidate = `${stem}-${n}`;
    if (!(await store.findIdentityByUsername(candidate))) return candidate;
  }
  return `${stem}-${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`;
}

/**
 * A new identity for an upstream account. The address is copied when the provider gives
 * one, as verified only when the provider says it verified it and the entry trusts that
 * (`trust_email`); no password.
 */
export function identityFor(
  account: UpstreamAccount,
  username: string,
  trustEmail: boolean,
  now: number,
): IdentityRecord {
  const email = account.email === null ? null : parseEmail(account.email);
  let displayName = username;
  try {
    displayName = requireDisplayName((account.name ?? '').slice(0, 128));
  } catch {
    // No name, or one a display name cannot be: the username stands in, as at registration.
  }
  return {
    id: newId(),
    username,
    display_name: displayName,
    avatar_url: null,
    email,
    email_verified_at: email !== null && account.emailVerified && trustEmail ? now : null,
    state: 'active',
    password_hash: null,
    created_at: now,
    updated_at: now,
  };
}
