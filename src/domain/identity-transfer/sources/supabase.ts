import { validationError } from '../../errors.js';
import {
  entry,
  flag,
  jsonColumn,
  requireArgs,
  type Source,
  type SourceDatabase,
  type SourceUser,
  text,
  time,
} from './source.js';

type Row = Record<string, unknown>;

/** Supabase's own password and phone identities: not links. */
const OWN_PROVIDERS = new Set(['email', 'phone']);

/**
 * Supabase Auth: `auth.users` and `auth.identities`, either as the dashboard's CSV downloads
 * (`users_rows.csv identities_rows.csv`) or read from the project's database (a PostgreSQL
 * connection string; `--schema` if the tables are not in `auth`). The database also gives
 * `auth.mfa_factors`, counted in the summary.
 */
export const supabase: Source = {
  usage: 'users_rows.csv identities_rows.csv, or a PostgreSQL connection string',
  async read(args, inputs, options) {
    requireArgs(
      args,
      1,
      2,
      'users_rows.csv identities_rows.csv, or a PostgreSQL connection string',
    );
    let users: Row[];
    let identities: Row[];
    let factors: Row[] = [];
    if (/^postgres(ql)?:\/\//.test(args[0]!)) {
      requireArgs(args, 1, 1, 'one PostgreSQL connection string');
      const database = await inputs.database(args[0]!);
      try {
        ({ users, identities, factors } = await readDatabase(database, options.schema ?? 'auth'));
      } finally {
        await database.close();
      }
    } else {
      requireArgs(args, 2, 2, 'users_rows.csv, then identities_rows.csv');
      users = await inputs.csv(args[0]!);
      identities = await inputs.csv(args[1]!);
      requireColumns(users, args[0]!, ['id', 'email', 'encrypted_password']);
      requireColumns(identities, args[1]!, ['user_id', 'provider']);
    }
    const identitiesOf = groupBy(identities, 'user_id');
    const factorsOf = groupBy(factors, 'user_id');
    return users.map((user, index) => {
      const id = typeof user.id === 'string' ? ` (id ${user.id})` : '';
      return entry(`users row ${index + 1}${id}`, () =>
        supabaseUser(
          user,
          identitiesOf.get(String(user.id)) ?? [],
          factorsOf.get(String(user.id)) ?? [],
          options.now,
        ),
      );
    });
  },
};

async function readDatabase(database: SourceDatabase, schema: string) {
  const table = async (name: string, required: boolean) => {
    const rows = await database.rows(`${schema}.${name}`);
    if (rows === null && required) {
      throw validationError(`the database has no ${schema}.${name} table (is it Supabase's?)`);
    }
    return rows ?? [];
  };
  return {
    users: await table('users', true),
    identities: await table('identities', true),
    factors: await table('mfa_factors', false),
  };
}

function requireColumns(rows: Row[], file: string, columns: string[]): void {
  const first = rows[0];
  const missing = first && columns.filter((column) => !(column in first));
  if (missing && missing.length > 0) {
    throw validationError(`${file} has no ${missing.join(', ')} column: is it the right table?`);
  }
}

function groupBy(rows: Row[], field: string): Map<string, Row[]> {
  const groups = new Map<string, Row[]>();
  for (const row of rows) {
    const key = String(row[field]);
    const group = groups.get(key);
    if (group) group.push(row);
    else groups.set(key, [row]);
  }
  return groups;
}

function supabaseUser(
  user: Row,
  identities: Row[],
  factors: Row[],
  now: number,
): SourceUser | { skipped: string } {
  if (time(user, 'deleted_at') !== undefined) {
    return { skipped: 'deleted (deleted_at is set)' };
  }
  if (flag(user, 'is_anonymous')) return { skipped: 'an anonymous user' };
  const metadata = jsonColumn(user, 'raw_user_meta_data');
  const bannedUntil = time(user, 'banned_until');
  const email = text(user, 'email');
  const phone = text(user, 'phone');
  const name = metaText(metadata, 'full_name') ?? metaText(metadata, 'name');
  return {
    // Supabase has no usernames: derived from the email (usernames.ts).
    username: null,
    line: {
      id: text(user, 'id'),
      display_name: name,
      avatar_url: metaText(metadata, 'avatar_url') ?? metaText(metadata, 'picture'),
      email,
      email_verified: email !== undefined && time(user, 'email_confirmed_at') !== undefined,
      state: bannedUntil !== undefined && Date.parse(bannedUntil) > now ? 'disabled' : 'active',
      created_at: time(user, 'created_at'),
      password_hash: text(user, 'encrypted_password'),
      links: identities
        .filter((identity) => !OWN_PROVIDERS.has(String(identity.provider)))
        .map((identity) => {
          // Before 2023 the provider's id was the row's id; provider_id holds it since.
          const subject = text(identity, 'provider_id') ?? text(identity, 'id');
          const provider = text(identity, 'provider');
          if (!provider || !subject)
            throw validationError('an identity needs provider and provider_id');
          return { provider, subject, verified: true };
        }),
    },
    factors: factors
      .filter((factor) => factor.status === 'verified')
      .map((factor) => String(factor.factor_type)),
    notes: phone === undefined ? [] : [`phone ${phone} not carried: identities have no phone`],
  };
}

function metaText(metadata: Row, field: string): string | undefined {
  const value = metadata[field];
  return typeof value === 'string' && value !== '' ? value : undefined;
}
