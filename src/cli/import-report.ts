import type {
  BadLine,
  ImportRefusal,
  ImportSummary,
} from '../domain/identity-transfer/import-identities.js';
import type { SourceReport } from '../domain/identity-transfer/sources/convert.js';
import { EXIT_FAILED, EXIT_INVALID } from './failure.js';
import { printJson } from './output.js';

/**
 * An import from another system's export (`--from`): lines are its users, named in its own
 * terms, and the summary says what the conversion made of them.
 */
export interface FromSource {
  /** Where the user of a line is in the source (`users[3] (alice)`). */
  where(line: number): string;
  report: SourceReport;
}

const located = (bad: BadLine, from: FromSource | undefined) =>
  from ? { ...bad, user: from.where(bad.line) } : bad;
const label = (bad: BadLine, from: FromSource | undefined) =>
  from ? from.where(bad.line) : `line ${bad.line}`;

export function reportRefusal(
  refusal: ImportRefusal,
  json: boolean | undefined,
  from?: FromSource,
): void {
  const noun = from ? 'bad user(s)' : 'bad line(s)';
  const message = `${refusal.count} ${noun}; nothing was imported`;
  process.exitCode = EXIT_INVALID;
  if (json) {
    return printJson({
      error: 'validation_error',
      message,
      bad_lines: refusal.bad_lines.map((bad) => located(bad, from)),
      bad_line_count: refusal.count,
    });
  }
  for (const bad of refusal.bad_lines)
    process.stderr.write(`tessera: ${label(bad, from)}: ${bad.message}\n`);
  if (refusal.count > refusal.bad_lines.length) {
    process.stderr.write(`tessera: … and ${refusal.count - refusal.bad_lines.length} more\n`);
  }
  process.stderr.write(`tessera: validation_error: ${message}\n`);
}

export function reportSummary(
  summary: ImportSummary,
  elapsedMs: number,
  json: boolean | undefined,
  from?: FromSource,
) {
  const failed = summary.failed.length;
  const message = `${failed} line(s) were not imported: an id or link was taken while importing`;
  if (failed > 0) process.exitCode = EXIT_FAILED;
  if (json) {
    const failure = failed > 0 ? { error: 'validation_error', message } : {};
    const failures = summary.failed.map((bad) => located(bad, from));
    const source = from ? { source: from.report } : {};
    return printJson({
      ...failure,
      ...summary,
      failed: failures,
      ...source,
      elapsed_ms: elapsedMs,
    });
  }
  if (from) printSourceReport(from.report);
  const passwords = Object.entries(summary.passwords)
    .map(([kind, count]) => `${kind} ${count}`)
    .join(', ');
  console.log(`imported ${summary.imported} identities, skipped ${summary.skipped} that exist`);
  if (passwords) console.log(`passwords: ${passwords}`);
  for (const bad of summary.failed)
    process.stderr.write(`tessera: ${label(bad, from)}: ${bad.message}\n`);
  if (failed > 0) process.stderr.write(`tessera: validation_error: ${message}\n`);
}

const counts = (record: Record<string, number>) =>
  Object.entries(record)
    .map(([name, count]) => `${name} ${count}`)
    .join(', ');

function printSourceReport(report: SourceReport): void {
  console.log(
    `${report.source}: ${report.users} records read, ${report.skipped_count} left out, ` +
      `${report.usernames_derived} usernames derived`,
  );
  for (const skipped of report.skipped)
    console.log(`  left out: ${skipped.where}: ${skipped.message}`);
  if (report.skipped_count > report.skipped.length) {
    console.log(`  … and ${report.skipped_count - report.skipped.length} more left out`);
  }
  const links = counts(report.links);
  console.log(`links: ${links || 'none'}`);
  const factors = counts(report.factors_not_carried);
  console.log(
    factors
      ? `factors not carried: ${factors} (the import has no second factors: these users enrol again)`
      : 'factors: none in the export',
  );
  for (const note of report.notes) console.log(`  note: ${note.where}: ${note.message}`);
  if (report.note_count > report.notes.length) {
    console.log(`  … and ${report.note_count - report.notes.length} more notes`);
  }
}
