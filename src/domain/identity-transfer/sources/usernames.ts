import { normalizeUsername, parseUsername } from '../../identities/identity.js';

/** Usernames are at most this long; a derived one leaves room for its `-N` suffix. */
const MAX_BASE = 56;

/**
 * Settles every user's username, deterministically (a re-run of the same export derives the
 * same names, so it skips what it wrote):
 *
 * 1. A source username that fits Tessera's rule is kept, lowercased (first come, first
 *    served: a second spelling of it is treated like a missing one).
 * 2. Otherwise the name is derived from the source username, else the email's local part,
 *    else `user`: NFKC, lowercased, every character outside `a-z 0-9 . _ - +` replaced by
 *    `-`, leading and trailing punctuation dropped, cut to 56 characters; if that is taken
 *    or shorter than 3 characters, the first free of `-2`, `-3`, … is appended.
 *
 * Returns the usernames in order, and which of them were derived.
 */
export function settleUsernames(
  users: Array<{ username: string | null; email: string | undefined }>,
): { usernames: string[]; derived: boolean[] } {
  const taken = new Set<string>();
  const usernames: Array<string | null> = users.map((user) => {
    const kept = user.username === null ? null : parseUsername(user.username);
    if (kept === null || taken.has(kept)) return null;
    taken.add(kept);
    return kept;
  });
  const derived = usernames.map((username) => username === null);
  users.forEach((user, index) => {
    if (usernames[index] !== null) return;
    const base = baseName(user.username ?? user.email?.split('@')[0] ?? '');
    let name = base;
    for (let suffix = 2; name.length < 3 || taken.has(name); suffix += 1) {
      name = `${base}-${suffix}`;
    }
    taken.add(name);
    usernames[index] = name;
  });
  return { usernames: usernames as string[], derived };
}

function baseName(raw: string): string {
  const cleaned = normalizeUsername(raw)
    .replace(/[^a-z0-9._+-]/g, '-')
    .slice(0, MAX_BASE)
    .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '');
  return cleaned === '' ? 'user' : cleaned;
}
