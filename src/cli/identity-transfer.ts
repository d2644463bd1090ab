import { open } from 'node:fs/promises';
import { once } from 'node:events';
import type { Command } from 'commander';
import { validationError } from '../domain/errors.js';
import {
  assertExportable,
  auditExport,
  exportIdentities,
  parseExportOptions,
} from '../domain/identity-transfer/export-identities.js';
import { importIdentities } from '../domain/identity-transfer/import-identities.js';
import { hashTransferFor } from '../adapters/password-hashes/transfer.js';
import { SOURCES } from '../domain/identity-transfer/sources/index.js';
import type { ImportOptions } from './import-from.js';
import { cliActor, withServices } from './context.js';
import { EXIT_FAILED } from './failure.js';
import { reportRefusal, reportSummary } from './import-report.js';
import { utf8Lines } from './lines.js';
import { progressBar } from './progress.js';

/** The file's bytes; opened before the database, so a wrong path costs nothing. */
async function openSource(file: string): Promise<AsyncIterable<Buffer>> {
  if (file === '-') return process.stdin;
  try {
    const handle = await open(file, 'r');
    return handle.createReadStream();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw validationError(`cannot read ${file} (${code})`);
  }
}

/**
 * Lines to standard output, waiting while the pipe is full (100,000 identities never sit
 * in memory). A reader that goes away (`| head`) ends the export instead of crashing it.
 */
function stdoutLines() {
  let closed: Error | undefined;
  process.stdout.on('error', (error) => (closed ??= error));
  return {
    async write(text: string): Promise<boolean> {
      if (closed) return false;
      if (!process.stdout.write(`${text}\n`)) {
        await once(process.stdout, 'drain').catch(() => undefined);
      }
      return !closed;
    },
  };
}

export function transferCommands(identity: Command): void {
  identity
    .command('import <source...>')
    .description(
      "import identities from a JSON-lines file (- for standard input), or with --from from another system's export",
    )
    .option('--from <system>', `read another system's export: ${Object.keys(SOURCES).join(', ')}`)
    .option('--schema <name>', "--from supabase or better-auth on PostgreSQL: the tables' schema")
    .option('--json', 'print one JSON document')
    .action(async (args: string[], options: ImportOptions) => {
      if (options.from !== undefined) {
        // Loaded on use: the other commands (serve too) never load the exports' readers.
        const { importFrom } = await import('./import-from.js');
        return importFrom(options.from, args, options);
      }
      if (options.schema !== undefined) throw validationError('--schema goes with --from');
      if (args.length !== 1)
        throw validationError('give one file (or --from <system> and its exports)');
      const file = args[0]!;
      const source = await openSource(file);
      const started = Date.now();
      const progress = progressBar(process.stderr, 'importing');
      const outcome = await withServices((deps) =>
        importIdentities(
          { ...deps, transfer: hashTransferFor(deps.hasher) },
          cliActor(),
          utf8Lines(source),
          (done, total) => progress.update(done, total),
        ),
      ).finally(() => progress.end());
      if ('refused' in outcome) return reportRefusal(outcome.refused, options.json);
      reportSummary(outcome.summary, Date.now() - started, options.json);
    });

  identity
    .command('export')
    .description('write every identity to standard output as JSON lines, the import format')
    .option('--include-password-hashes', 'include the password hashes')
    .option(
      '--without-credentials',
      'export even identities with TOTP, recovery codes or passkeys, leaving those behind',
    )
    .option('--state <state>', 'only identities in this state: active or disabled')
    .action(async (raw: Parameters<typeof parseExportOptions>[0]) => {
      const options = parseExportOptions(raw);
      const out = stdoutLines();
      const { written, complete } = await withServices(async (deps) => {
        // Refused before the audit entry and the first line: nothing is written.
        await assertExportable(deps, options);
        await auditExport(deps, cliActor(), options);
        let count = 0;
        for await (const line of exportIdentities(
          { ...deps, transfer: hashTransferFor(deps.hasher) },
          options,
        )) {
          if (!(await out.write(JSON.stringify(line)))) return { written: count, complete: false };
          count += 1;
        }
        return { written: count, complete: true };
      });
      if (!complete) {
        process.exitCode = EXIT_FAILED;
        process.stderr.write(`tessera: standard output closed after ${written} identities\n`);
      } else if (process.stderr.isTTY) {
        process.stderr.write(`tessera: exported ${written} identities\n`);
      }
    });
}
