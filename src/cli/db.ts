import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { type Config, loadConfig } from '../config.js';
import { validationError } from '../domain/errors.js';
import { isPostgresUrl } from '../storage/database-url.js';
import { cliActor, withServices } from './context.js';
import { printJson } from './output.js';

const dialectOf = (url: string) => (isPostgresUrl(url) ? 'postgres' : 'sqlite');

/**
 * What the target must share with the source for what was copied to work there: the
 * secrets (sealed TOTP secrets and signing keys, peppered password hashes) and the names
 * passkeys and tokens are bound to. On SQLite without the variables, the secrets are
 * files in the data directory.
 */
function notes(config: Config): string[] {
  const secret = (variable: string, configured: string | null, file: string, previous: string) => {
    const path = join(config.dataDir, file);
    if (configured === null && !isPostgresUrl(config.databaseUrl) && existsSync(path)) {
      return `set ${variable} on the target to the content of ${path} (the source's generated one)`;
    }
    return `run the target with the same ${variable} (and ${previous}) as the source`;
  };
  return [
    secret(
      'SERVICE_ENCRYPTION_KEY',
      config.encryptionKey,
      'encryption-key',
      'SERVICE_ENCRYPTION_KEYS_PREVIOUS',
    ),
    secret(
      'SERVICE_PASSWORD_PEPPER',
      config.passwordPepper,
      'pepper',
      'SERVICE_PASSWORD_PEPPERS_PREVIOUS',
    ),
    'keep SERVICE_PUBLIC_URL, SERVICE_WEBAUTHN_RP_ID and SERVICE_OIDC_ISSUER as they are: passkeys and issued tokens are bound to them',
  ];
}

export function dbCommands(program: Command): void {
  const db = program.command('db').description('the database as a whole');

  db.command('copy')
    .description(
      'copy every table into another, empty database (e.g. SQLite to PostgreSQL) and verify it',
    )
    .requiredOption('--to <url>', 'the target database, as SERVICE_DATABASE_URL would name it')
    .option('--json', 'print one JSON document')
    .action(async (options: { to: string; json?: boolean }) => {
      const config = loadConfig();
      // Loaded on use, like the store every other command opens (context.ts).
      const [{ CopyRefused }, { copyBetween }] = await Promise.all([
        import('../storage/copy/copy-database.js'),
        import('../storage/copy/open.js'),
      ]);
      const tables = await copyBetween({
        sourceUrl: config.databaseUrl,
        targetUrl: options.to,
        timeoutMs: config.dbTimeoutMs,
        // In the source before its snapshot is read: the target's audit log has it too.
        beforeCopy: () =>
          withServices((deps) =>
            deps.store.transaction((tx) =>
              deps.audit.write(tx, cliActor(), {
                action: 'db_copy',
                details: { target: dialectOf(options.to) },
              }),
            ),
          ),
      }).catch((error: unknown) => {
        throw error instanceof CopyRefused ? validationError(error.message) : error;
      });
      const summary = {
        source: dialectOf(config.databaseUrl),
        target: dialectOf(options.to),
        tables,
        rows: tables.reduce((sum, table) => sum + table.rows, 0),
        verified: true,
        notes: notes(config),
      };
      if (options.json) return printJson(summary);
      console.log(
        `copied ${summary.rows} row(s) in ${tables.length} tables from ${summary.source} to ${summary.target}; every table's row count and contents verified`,
      );
      for (const { table, rows } of tables) console.log(`  ${table.padEnd(20)} ${rows}`);
      for (const note of summary.notes) console.log(`note: ${note}`);
    });
}
