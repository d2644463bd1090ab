import { validationError } from '../../errors.js';
import {
  entry,
  expectArray,
  flag,
  isObject,
  requireArgs,
  type Source,
  type SourceUser,
  text,
  time,
} from './source.js';

/** Auth0's own database connections: a user's password identity, not a link. */
const DATABASE_PROVIDER = 'auth0';

/**
 * Auth0: the bulk user export (a `users-exports` job in `json` format: JSON lines, gzipped
 * as Auth0 hands it over or not), then the password-hash export Auth0 support provides on
 * request (JSON lines of `{"_id": {"$oid": …}, "email", "passwordHash", "connection", …}`).
 * Without the second file, users import without passwords.
 */
export const auth0: Source = {
  usage: 'the bulk user export (JSON lines), then the password-hash export',
  async read(args, inputs) {
    requireArgs(args, 1, 2, 'the bulk user export, then optionally the password-hash export');
    const users = await inputs.jsonLines(args[0]!);
    const hashes = args[1] === undefined ? [] : await inputs.jsonLines(args[1]);
    const hashByOid = new Map<string, string>();
    const hashLine = new Map<string, number>();
    hashes.forEach((record, index) => {
      const oid = isObject(record) && isObject(record._id) ? record._id.$oid : undefined;
      const hash = isObject(record) ? record.passwordHash : undefined;
      if (typeof oid !== 'string' || typeof hash !== 'string') {
        throw validationError(
          `${args[1]}: line ${index + 1} is no password-hash record (it needs _id.$oid and passwordHash)`,
        );
      }
      hashByOid.set(oid, hash);
      hashLine.set(oid, index + 1);
    });
    const entries = users.map((user, index) => {
      const id = isObject(user) && typeof user.user_id === 'string' ? ` (${user.user_id})` : '';
      return entry(`line ${index + 1}${id}`, () =>
        auth0User(user, hashByOid, args[1] !== undefined),
      );
    });
    // A hash whose user is not in the user export (deleted since, or another export's).
    for (const oid of usedOids(users)) hashLine.delete(oid);
    for (const [oid, line] of hashLine) {
      entries.push({
        where: `${args[1]}: line ${line} (auth0|${oid})`,
        skipped: 'a password hash whose user is not in the user export',
      });
    }
    return entries;
  },
};

function auth0User(
  user: unknown,
  hashByOid: Map<string, string>,
  hashesGiven: boolean,
): SourceUser {
  if (!isObject(user)) throw validationError('a user must be a JSON object');
  const userId = text(user, 'user_id');
  if (userId === undefined) throw validationError('user_id is required');
  const identities = expectArray(user.identities ?? [], 'identities').map((identity, index) => {
    const provider = isObject(identity) ? text(identity, 'provider') : undefined;
    const subject = isObject(identity) ? identity.user_id : undefined;
    if (!provider || (typeof subject !== 'string' && typeof subject !== 'number')) {
      throw validationError(`identities[${index}] needs provider and user_id`);
    }
    return { provider, subject: String(subject) };
  });
  // The export's identities name the database user by its id without `auth0|`; an export
  // made without the identities field still has it in user_id.
  const database = identities.find((identity) => identity.provider === DATABASE_PROVIDER);
  const oid =
    database?.subject ??
    (userId.startsWith(`${DATABASE_PROVIDER}|`) ? userId.slice(DATABASE_PROVIDER.length + 1) : '');
  const links = identities.length
    ? identities.filter((identity) => identity.provider !== DATABASE_PROVIDER)
    : linkFromUserId(userId);
  const email = text(user, 'email');
  const multifactor = Array.isArray(user.multifactor) ? user.multifactor : [];
  return {
    username: text(user, 'username') ?? null,
    line: {
      display_name: text(user, 'name'),
      avatar_url: text(user, 'picture'),
      email,
      email_verified: email !== undefined && flag(user, 'email_verified'),
      state: user.blocked === true ? 'disabled' : 'active',
      created_at: time(user, 'created_at'),
      password_hash: hashByOid.get(oid),
      links: links.map((link) => ({ ...link, verified: true })),
    },
    factors: multifactor.map((factor) => (typeof factor === 'string' ? factor : 'mfa')),
    notes:
      database && !hashByOid.has(oid)
        ? [
            hashesGiven
              ? 'no password hash for this user in the password-hash export'
              : 'password not carried: no password-hash export given',
          ]
        : [],
  };
}

/** The database users' ids the user export holds. */
function usedOids(users: unknown[]): string[] {
  return users.flatMap((user) => {
    if (!isObject(user)) return [];
    const identities = Array.isArray(user.identities) ? user.identities.filter(isObject) : [];
    const database = identities.find((identity) => identity.provider === DATABASE_PROVIDER);
    if (database && typeof database.user_id === 'string') return [database.user_id];
    const id = typeof user.user_id === 'string' ? user.user_id : '';
    return id.startsWith(`${DATABASE_PROVIDER}|`) ? [id.slice(DATABASE_PROVIDER.length + 1)] : [];
  });
}

/** `google-oauth2|1234` names the provider and the subject when identities are not exported. */
function linkFromUserId(userId: string): Array<{ provider: string; subject: string }> {
  const bar = userId.indexOf('|');
  if (bar <= 0 || userId.startsWith(`${DATABASE_PROVIDER}|`)) return [];
  return [{ provider: userId.slice(0, bar), subject: userId.slice(bar + 1) }];
}
