import type { LinkKey } from '../links/link.js';
import type { ImportLine } from './transfer-line.js';
import type { TransferStore } from './transfer-store.js';

/** A line refused, with its number in the file. */
export interface BadLine {
  line: number;
  message: string;
}

const keyOf = (link: LinkKey) => JSON.stringify([link.provider, link.subject]);
const linkText = (link: LinkKey) =>
  `${JSON.stringify(link.provider)}/${JSON.stringify(link.subject)}`;

/**
 * A username, email, id or link twice in the same file: the later line is bad (whichever of the
 * two the operator meant, importing both would make one depend on the order of batches).
 */
export function duplicatesInFile(lines: ImportLine[]): BadLine[] {
  const usernames = new Map<string, number>();
  const emails = new Map<string, number>();
  const ids = new Map<string, number>();
  const links = new Map<string, number>();
  const bad: BadLine[] = [];
  for (const line of lines) {
    const problem = firstDuplicate(line, usernames, emails, ids, links);
    if (problem !== undefined) bad.push({ line: line.line, message: problem });
  }
  return bad;
}

function firstDuplicate(
  line: ImportLine,
  usernames: Map<string, number>,
  emails: Map<string, number>,
  ids: Map<string, number>,
  links: Map<string, number>,
): string | undefined {
  const seen = usernames.get(line.username);
  if (seen !== undefined) return `username ${line.username} is also on line ${seen}`;
  usernames.set(line.username, line.line);
  if (line.email !== null) {
    const seenEmail = emails.get(line.email);
    if (seenEmail !== undefined) return `email ${line.email} is also on line ${seenEmail}`;
    emails.set(line.email, line.line);
  }
  if (line.id !== null) {
    const seenId = ids.get(line.id);
    if (seenId !== undefined) return `id ${line.id} is also on line ${seenId}`;
    ids.set(line.id, line.line);
  }
  for (const link of line.links) {
    const seenLink = links.get(keyOf(link));
    if (seenLink !== undefined) return `link ${linkText(link)} is also on line ${seenLink}`;
    links.set(keyOf(link), line.line);
  }
  return undefined;
}

export interface SortedLines {
  /** Lines whose username is free, and nothing else of theirs taken: to be written. */
  fresh: ImportLine[];
  /** Lines whose username exists: skipped, never changed (a re-run skips what it wrote). */
  existing: ImportLine[];
  /** Lines whose username is free but whose id, email or a link belongs to another identity. */
  conflicting: BadLine[];
}

/** Sorts lines by what the database already holds. */
export async function sortAgainstStore(
  store: Pick<
    TransferStore,
    'existingUsernames' | 'existingEmails' | 'existingIdentityIds' | 'existingLinks'
  >,
  lines: ImportLine[],
): Promise<SortedLines> {
  const taken = new Set(await store.existingUsernames(lines.map((line) => line.username)));
  const existing = lines.filter((line) => taken.has(line.username));
  const rest = lines.filter((line) => !taken.has(line.username));
  const ids = rest.flatMap((line) => (line.id === null ? [] : [line.id]));
  const takenIds = new Set(ids.length ? await store.existingIdentityIds(ids) : []);
  const emails = rest.flatMap((line) => (line.email === null ? [] : [line.email]));
  const takenEmails = new Set(emails.length ? await store.existingEmails(emails) : []);
  const keys = rest.flatMap((line) => line.links);
  const takenLinks = new Set((keys.length ? await store.existingLinks(keys) : []).map(keyOf));
  const sorted: SortedLines = { fresh: [], existing, conflicting: [] };
  for (const line of rest) {
    const link = line.links.find((candidate) => takenLinks.has(keyOf(candidate)));
    if (line.id !== null && takenIds.has(line.id)) {
      sorted.conflicting.push({
        line: line.line,
        message: `id ${line.id} belongs to another identity`,
      });
    } else if (line.email !== null && takenEmails.has(line.email)) {
      sorted.conflicting.push({
        line: line.line,
        message: `email ${line.email} belongs to another identity`,
      });
    } else if (link !== undefined) {
      sorted.conflicting.push({
        line: line.line,
        message: `link ${linkText(link)} belongs to another identity`,
      });
    } else {
      sorted.fresh.push(line);
    }
  }
  return sorted;
}
