import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { postgresUrl } from './databases.js';

/** Runs `work` on a superuser connection to the test server. */
export async function asAdmin<T>(work: (admin: pg.Client) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

/**
 * A database of its own, for tests that change database-wide settings (ALLOW_CONNECTIONS,
 * default_transaction_read_only) or need a role that is not a superuser (connection
 * limits do not apply to superusers). `url` connects as `role` when one was asked for.
 */
export interface ScratchDatabase {
  name: string;
  role: string | undefined;
  url: string;
  /** Ends every other session on the database (pg_terminate_backend: 57P01 to them). */
  terminateSessions(): Promise<void>;
  drop(): Promise<void>;
}

export async function createScratchDatabase(
  options: { ownRole?: boolean } = {},
): Promise<ScratchDatabase> {
  const suffix = randomBytes(5).toString('hex');
  const name = `tessera_scratch_${suffix}`;
  const role = options.ownRole ? `tessera_role_${suffix}` : undefined;
  await asAdmin(async (admin) => {
    if (role) await admin.query(`CREATE ROLE ${role} LOGIN`);
    await admin.query(`CREATE DATABASE ${name}${role ? ` OWNER ${role}` : ''}`);
  });
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  if (role) url.username = role;
  const terminateSessions = () =>
    asAdmin(async (admin) => {
      await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [name],
      );
    });
  return {
    name,
    role,
    url: url.toString(),
    terminateSessions,
    drop: () =>
      asAdmin(async (admin) => {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        if (role) await admin.query(`DROP ROLE IF EXISTS ${role}`);
      }),
  };
}
