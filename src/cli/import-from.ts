import type { Actor } from '../domain/audit/audit-log.js';
import { validationError } from '../domain/errors.js';
import { importIdentities } from '../domain/identity-transfer/import-identities.js';
import { convertEntries } from '../domain/identity-transfer/sources/convert.js';
import { SOURCES } from '../domain/identity-transfer/sources/index.js';
import { hashTransferFor } from '../adapters/password-hashes/transfer.js';
import { sourceInputs } from '../adapters/source-exports/inputs.js';
import { cliActor, withServices } from './context.js';
import { reportRefusal, reportSummary } from './import-report.js';
import { progressBar } from './progress.js';

export interface ImportOptions {
  from?: string;
  schema?: string;
  json?: boolean;
}

/**
 * `tessera identity import --from <system> <exports…>`: the source's export, read whole
 * and converted to import lines before the database is opened, then the one import.
 */
export async function importFrom(name: string, args: string[], options: ImportOptions) {
  const source = SOURCES[name];
  if (source === undefined) {
    throw validationError(`--from must be one of: ${Object.keys(SOURCES).join(', ')}`);
  }
  if (options.schema !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(options.schema)) {
    throw validationError('--schema must be a plain schema name');
  }
  const started = Date.now();
  const entries = await source.read(args, sourceInputs, {
    schema: options.schema,
    now: Date.now(),
  });
  const converted = convertEntries(name, entries);
  const from = { where: (line: number) => converted.where[line - 1]!, report: converted.report };
  const progress = progressBar(process.stderr, 'importing');
  const outcome = await withServices((deps) =>
    importIdentities(
      { ...deps, transfer: hashTransferFor(deps.hasher) },
      // Each identity's identity_import entry then names the system it came from.
      withDetails(cliActor(), { from: name }),
      lines(converted.lines),
      (done, total) => progress.update(done, total),
      converted.problems,
    ),
  ).finally(() => progress.end());
  if ('refused' in outcome) return reportRefusal(outcome.refused, options.json, from);
  reportSummary(outcome.summary, Date.now() - started, options.json, from);
}

function withDetails(actor: Actor, details: Record<string, unknown>): Actor {
  return { ...actor, details: { ...actor.details, ...details } };
}

async function* lines(all: string[]): AsyncGenerator<string> {
  yield* all;
}
