import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import { asAdmin } from '../helpers/postgres-admin.js';

/**
 * The Supabase and better-auth fixtures as databases of those systems: each loaded into a
 * scratch schema of the test PostgreSQL, with the column types the systems' own migrations
 * give them (jsonb, timestamptz, boolean, uuid), for `--from … postgres://… --schema`.
 */
const created: string[] = [];

async function scratchSchema(prefix: string, ddl: (schema: string) => string[]) {
  const schema = `${prefix}_${randomBytes(5).toString('hex')}`;
  created.push(schema);
  await asAdmin(async (admin) => {
    await admin.query(`CREATE SCHEMA ${schema}`);
    for (const statement of ddl(schema)) await admin.query(statement);
  });
  return schema;
}

export async function dropSourceSchemas(): Promise<void> {
  const schemas = created.splice(0);
  if (schemas.length === 0) return;
  await asAdmin(async (admin) => {
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  });
}

async function insertRows(schema: string, table: string, rows: Array<Record<string, unknown>>) {
  await asAdmin(async (admin) => {
    for (const row of rows) {
      const columns = Object.keys(row);
      await admin.query(
        `INSERT INTO ${schema}."${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`,
        columns.map((column) => row[column]),
      );
    }
  });
}

/** Supabase's auth.users, auth.identities and auth.mfa_factors (the columns the CSVs hold). */
export async function supabaseSchema(folder: string): Promise<string> {
  const schema = await scratchSchema('supabase', (s) => [
    `CREATE TABLE ${s}.users (
      instance_id uuid, id uuid PRIMARY KEY, aud varchar(255), role varchar(255),
      email varchar(255), encrypted_password varchar(255), email_confirmed_at timestamptz,
      invited_at timestamptz, confirmation_token varchar(255), confirmation_sent_at timestamptz,
      recovery_token varchar(255), recovery_sent_at timestamptz,
      email_change_token_new varchar(255), email_change varchar(255),
      email_change_sent_at timestamptz, last_sign_in_at timestamptz, raw_app_meta_data jsonb,
      raw_user_meta_data jsonb, is_super_admin boolean, created_at timestamptz,
      updated_at timestamptz, phone text UNIQUE, phone_confirmed_at timestamptz,
      phone_change text, phone_change_token varchar(255), phone_change_sent_at timestamptz,
      confirmed_at timestamptz, email_change_token_current varchar(255),
      email_change_confirm_status smallint, banned_until timestamptz,
      reauthentication_token varchar(255), reauthentication_sent_at timestamptz,
      is_sso_user boolean NOT NULL DEFAULT false, deleted_at timestamptz,
      is_anonymous boolean NOT NULL DEFAULT false)`,
    `CREATE TABLE ${s}.identities (
      provider_id text NOT NULL, user_id uuid NOT NULL REFERENCES ${s}.users(id),
      identity_data jsonb NOT NULL, provider text NOT NULL, last_sign_in_at timestamptz,
      created_at timestamptz, updated_at timestamptz, email text, id uuid PRIMARY KEY)`,
    `CREATE TABLE ${s}.mfa_factors (
      id uuid PRIMARY KEY, user_id uuid NOT NULL REFERENCES ${s}.users(id), friendly_name text,
      factor_type text NOT NULL, status text NOT NULL, created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL, secret text)`,
  ]);
  for (const table of ['users', 'identities', 'mfa_factors']) {
    const rows = parse(readFileSync(join(folder, `${table}_rows.csv`)), { columns: true }) as Array<
      Record<string, string>
    >;
    // The CSV writes NULL as an empty field.
    const typed = rows.map((row) =>
      Object.fromEntries(Object.entries(row).map(([k, v]) => [k, v === '' ? null : v])),
    );
    await insertRows(schema, table, typed);
  }
  return schema;
}

const BOOLEAN = new Set(['emailVerified', 'banned', 'twoFactorEnabled', 'verified']);
const isTime = (column: string) => /(At|Expires)$/.test(column);

/**
 * better-auth's tables copied from the fixture's SQLite file to PostgreSQL, typed as
 * better-auth's PostgreSQL migrations type them (boolean, timestamptz, text).
 */
export async function betterAuthSchema(file: string): Promise<string> {
  const source = new BetterSqlite3(file, { readonly: true });
  try {
    const tables = ['user', 'account', 'twoFactor'];
    const columns = Object.fromEntries(
      tables.map((table) => [
        table,
        (source.prepare(`PRAGMA table_info("${table}")`).all() as Array<{ name: string }>).map(
          (column) => column.name,
        ),
      ]),
    );
    const type = (column: string) =>
      BOOLEAN.has(column) ? 'boolean' : isTime(column) ? 'timestamptz' : 'text';
    const schema = await scratchSchema('better_auth', (s) =>
      tables.map(
        (table) =>
          `CREATE TABLE ${s}."${table}" (${columns[table]!.map((c) => `"${c}" ${type(c)}`).join(', ')})`,
      ),
    );
    for (const table of tables) {
      const rows = source.prepare(`SELECT * FROM "${table}"`).all() as Array<
        Record<string, unknown>
      >;
      const typed = rows.map((row) =>
        Object.fromEntries(
          Object.entries(row).map(([k, v]) => [k, BOOLEAN.has(k) && v !== null ? v === 1 : v]),
        ),
      );
      await insertRows(schema, table, typed);
    }
    return schema;
  } finally {
    source.close();
  }
}
