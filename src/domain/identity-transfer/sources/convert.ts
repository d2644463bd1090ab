import { parseEmail } from '../../identities/email.js';
import { requireAvatarUrl, requireDisplayName } from '../../identities/identity.js';
import type { BadLine } from '../import-check.js';
import type { ImportFields, SourceEntry } from './source.js';
import { settleUsernames } from './usernames.js';

/** Notes and skipped users reported by name; the counts cover the rest. */
const MAX_LISTED = 100;

export interface SourceNote {
  /** The user in the source's terms (`users[3] (id …)`). */
  where: string;
  message: string;
}

/** What a source's export became, beside what the import itself reports. */
export interface SourceReport {
  source: string;
  /** Users the export holds (skipped ones included). */
  users: number;
  /** Users left out on purpose, with why (the first 100 of `skipped_count`). */
  skipped: SourceNote[];
  skipped_count: number;
  /** Usernames made up because the source had none, or one Tessera's rule refuses. */
  usernames_derived: number;
  /** Links per provider, as the source names providers. */
  links: Record<string, number>;
  /** Second factors the source holds, by kind: the import format carries none. */
  factors_not_carried: Record<string, number>;
  /** Fields dropped because they break Tessera's rules (the first 100 of `note_count`). */
  notes: SourceNote[];
  note_count: number;
}

export interface ConvertedSource {
  /**
   * One import line (JSON) per entry of the source, blank for an entry not imported: a
   * line's number is its entry's, and the import ignores blank lines.
   */
  lines: string[];
  /** Where each entry is in the source, by line number - 1. */
  where: string[];
  /** Records that cannot be read: the import refuses the export, as a file with bad lines. */
  problems: BadLine[];
  report: SourceReport;
}

/**
 * Turns a source's entries into import lines: usernames settled (usernames.ts), fields
 * Tessera's rules refuse dropped with a note rather than stopping the move, and every
 * mapping counted for the summary.
 */
export function convertEntries(source: string, entries: SourceEntry[]): ConvertedSource {
  const report: SourceReport = {
    source,
    users: entries.length,
    skipped: [],
    skipped_count: 0,
    usernames_derived: 0,
    links: {},
    factors_not_carried: {},
    notes: [],
    note_count: 0,
  };
  const note = (list: 'skipped' | 'notes', where: string, message: string) => {
    if (report[list].length < MAX_LISTED) report[list].push({ where, message });
    if (list === 'skipped') report.skipped_count += 1;
    else report.note_count += 1;
  };
  const problems: BadLine[] = [];
  const users: Array<{ index: number; username: string | null; line: ImportFields }> = [];
  entries.forEach((entry, index) => {
    if ('problem' in entry) problems.push({ line: index + 1, message: entry.problem });
    else if ('skipped' in entry) note('skipped', entry.where, entry.skipped);
    else {
      const line = tidy(entry.user.line, (message) => note('notes', entry.where, message));
      for (const message of entry.user.notes ?? []) note('notes', entry.where, message);
      for (const factor of entry.user.factors) {
        report.factors_not_carried[factor] = (report.factors_not_carried[factor] ?? 0) + 1;
      }
      users.push({ index, username: entry.user.username, line });
    }
  });
  const { usernames, derived } = settleUsernames(
    users.map((user) => ({ username: user.username, email: user.line.email })),
  );
  const lines: string[] = new Array<string>(entries.length).fill('');
  users.forEach((user, position) => {
    if (derived[position]) report.usernames_derived += 1;
    for (const link of user.line.links ?? []) {
      report.links[link.provider] = (report.links[link.provider] ?? 0) + 1;
    }
    lines[user.index] = JSON.stringify({ username: usernames[position], ...user.line });
  });
  return { lines, where: entries.map((entry) => entry.where), problems, report };
}

/** Drops a display name, avatar or email Tessera's rules refuse, saying so. */
function tidy(line: ImportFields, note: (message: string) => void): ImportFields {
  const tidied = { ...line };
  if (tidied.display_name !== undefined && !fits(() => requireDisplayName(line.display_name!))) {
    delete tidied.display_name;
    note('display name dropped: not 1-128 characters of one line');
  }
  if (tidied.avatar_url !== undefined && !fits(() => requireAvatarUrl(line.avatar_url!))) {
    delete tidied.avatar_url;
    note('avatar dropped: not an http: or https: URL');
  }
  if (tidied.email !== undefined && parseEmail(tidied.email) === null) {
    note(`email ${JSON.stringify(tidied.email)} dropped: not an address Tessera accepts`);
    delete tidied.email;
    delete tidied.email_verified;
  }
  if (tidied.email === undefined) delete tidied.email_verified;
  return tidied;
}

function fits(check: () => unknown): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}
