import { validationError } from '../../errors.js';
import { entry, flag, requireArgs, type Source, type SourceUser, text, time } from './source.js';

type Row = Record<string, unknown>;

/** better-auth's email-and-password account: the user's password, not a link. */
const CREDENTIAL = 'credential';

/**
 * better-auth: its `user` and `account` tables (and `twoFactor`, counted), with the default
 * names and columns of its schema, read from the SQLite file or the PostgreSQL database
 * (connection string; `--schema` when not `public`) the application uses.
 */
export const betterAuth: Source = {
  usage: 'the SQLite file or PostgreSQL connection string of the application',
  async read(args, inputs, options) {
    requireArgs(args, 1, 1, 'one SQLite file or PostgreSQL connection string');
    const location = args[0]!;
    const database = await inputs.database(location);
    const prefix = /^postgres(ql)?:\/\//.test(location) ? `${options.schema ?? 'public'}.` : '';
    let users: Row[];
    let accounts: Row[];
    let factors: Row[];
    try {
      const table = async (name: string) => database.rows(`${prefix}${name}`);
      const found = await table('user');
      if (found === null) {
        throw validationError(`the database has no ${prefix}user table (is it better-auth's?)`);
      }
      users = found;
      accounts = (await table('account')) ?? [];
      factors = (await table('twoFactor')) ?? [];
    } finally {
      await database.close();
    }
    const accountsOf = new Map<string, Row[]>();
    for (const account of accounts) {
      const key = String(account.userId);
      accountsOf.set(key, [...(accountsOf.get(key) ?? []), account]);
    }
    const withFactor = new Set(factors.map((factor) => String(factor.userId)));
    return users.map((user, index) => {
      const id = typeof user.id === 'string' ? ` (id ${user.id})` : '';
      return entry(`user row ${index + 1}${id}`, () =>
        betterAuthUser(user, accountsOf.get(String(user.id)) ?? [], withFactor, options.now),
      );
    });
  },
};

function betterAuthUser(
  user: Row,
  accounts: Row[],
  withFactor: Set<string>,
  now: number,
): SourceUser {
  const credential = accounts.find((account) => account.providerId === CREDENTIAL);
  const email = text(user, 'email');
  // The admin plugin's ban; one whose banExpires has passed no longer holds.
  const banExpires = time(user, 'banExpires');
  const banned = flag(user, 'banned') && (banExpires === undefined || Date.parse(banExpires) > now);
  const hasFactor = flag(user, 'twoFactorEnabled') && withFactor.has(String(user.id));
  return {
    // The username plugin's column, when the application uses it.
    username: text(user, 'username') ?? null,
    line: {
      display_name: text(user, 'name'),
      avatar_url: text(user, 'image'),
      email,
      email_verified: email !== undefined && flag(user, 'emailVerified'),
      state: banned ? 'disabled' : 'active',
      created_at: time(user, 'createdAt'),
      password_hash: credential === undefined ? undefined : text(credential, 'password'),
      links: accounts
        .filter((account) => account.providerId !== CREDENTIAL)
        .map((account) => {
          const provider = text(account, 'providerId');
          const subject = text(account, 'accountId');
          if (!provider || !subject)
            throw validationError('an account needs providerId and accountId');
          return { provider, subject, verified: true };
        }),
    },
    factors: hasFactor ? ['totp'] : [],
  };
}
