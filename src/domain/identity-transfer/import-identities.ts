import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { UniqueViolation } from '../unique-violation.js';
import { type Actor, auditRecord } from '../audit/audit-log.js';
import type { IdentityRecord } from '../identities/identity.js';
import type { LinkRecord } from '../links/link.js';
import type { HashTransfer } from '../passwords/hash-transfer.js';
import type { PasswordHasher } from '../passwords/password-hasher.js';
import { type PasswordPolicy, requirePasswordPolicy } from '../password-policy/policy.js';
import type { Store } from '../store.js';
import { type BadLine, duplicatesInFile, sortAgainstStore } from './import-check.js';
import { type ImportLine, lineProblem, parseImportLine } from './transfer-line.js';

export type { BadLine };

export interface ImportDeps {
  store: Store;
  clock: Clock;
  hasher: PasswordHasher;
  transfer: HashTransfer;
  passwordPolicy: PasswordPolicy;
}

/** Identities per transaction: large enough for speed, small enough to hold no lock long. */
export const IMPORT_BATCH = 500;
/** Bad lines reported by number; the count covers the rest. */
export const MAX_REPORTED_LINES = 100;
/** A batch whose check a concurrent writer overtook is checked and written again this often. */
const ATTEMPTS = 3;

export interface ImportSummary {
  imported: number;
  /** Lines whose username already existed: skipped, the identity left as it is. */
  skipped: number;
  /** Lines refused while writing: their id, email or a link was taken since the check. */
  failed: BadLine[];
  /** Imported identities per password: a hash scheme, `plaintext` or `none`. */
  passwords: Record<string, number>;
}

/** Nothing was written: these lines are bad (at most MAX_REPORTED_LINES of `count`). */
export interface ImportRefusal {
  bad_lines: BadLine[];
  count: number;
}

export type ImportOutcome = { refused: ImportRefusal } | { summary: ImportSummary };

export type ImportProgress = (done: number, total: number) => void;

/**
 * `tessera identity import`. Every line is read and checked (format, policy, duplicates in
 * the file, ids and links owned by identities already there) before anything is written:
 * a file with a bad line imports nothing. Then identities are written in transactions of
 * IMPORT_BATCH, each identity with its links and its audit row, so an interruption leaves
 * whole identities only, and a re-run skips them by username.
 */
export async function importIdentities(
  deps: ImportDeps,
  actor: Actor,
  source: AsyncIterable<string>,
  onProgress: ImportProgress = () => undefined,
  /** Lines already found bad by whoever made `source` (a conversion: sources/convert.ts). */
  knownBad: BadLine[] = [],
): Promise<ImportOutcome> {
  const { lines, bad } = await readLines(source, deps);
  bad.push(...knownBad);
  bad.push(...duplicatesInFile(lines));
  const toWrite: ImportLine[] = [];
  let skipped = 0;
  for (let start = 0; start < lines.length; start += IMPORT_BATCH) {
    const sorted = await sortAgainstStore(deps.store, lines.slice(start, start + IMPORT_BATCH));
    bad.push(...sorted.conflicting);
    toWrite.push(...sorted.fresh);
    skipped += sorted.existing.length;
  }
  if (bad.length > 0) {
    bad.sort((a, b) => a.line - b.line);
    return { refused: { bad_lines: bad.slice(0, MAX_REPORTED_LINES), count: bad.length } };
  }

  const summary: ImportSummary = { imported: 0, skipped, failed: [], passwords: {} };
  onProgress(skipped, lines.length);
  for (let start = 0; start < toWrite.length; start += IMPORT_BATCH) {
    await writeBatch(deps, actor, toWrite.slice(start, start + IMPORT_BATCH), summary);
    onProgress(skipped + Math.min(start + IMPORT_BATCH, toWrite.length), lines.length);
  }
  return { summary };
}

async function readLines(source: AsyncIterable<string>, deps: ImportDeps) {
  const lines: ImportLine[] = [];
  const bad: BadLine[] = [];
  let number = 0;
  for await (const raw of source) {
    number += 1;
    const text = number === 1 ? raw.replace(/^\uFEFF/, '') : raw;
    if (text.trim() === '') continue;
    try {
      const line = parseImportLine(text, number, deps.transfer);
      if (line.password.kind === 'plaintext') {
        await requirePasswordPolicy(deps.passwordPolicy, line.password.password, {
          username: line.username,
          displayName: line.display_name,
        });
      }
      lines.push(line);
    } catch (error) {
      bad.push({ line: number, message: lineProblem(error) });
    }
  }
  return { lines, bad };
}

interface Prepared {
  line: ImportLine;
  identity: IdentityRecord;
  links: LinkRecord[];
  password: string;
}

/** Hashes plaintext passwords first: argon2 must never hold a database lock. */
async function prepare(deps: ImportDeps, lines: ImportLine[]): Promise<Prepared[]> {
  const now = deps.clock.now();
  return Promise.all(
    lines.map(async (line) => {
      // Before the first await, so new ids (time-ordered) follow the order of the file.
      const id = line.id ?? newId();
      const { password } = line;
      const hash =
        password.kind === 'hash'
          ? password.stored
          : password.kind === 'plaintext'
            ? await deps.hasher.hash(password.password)
            : null;
      return {
        line,
        identity: {
          id,
          username: line.username,
          display_name: line.display_name,
          avatar_url: line.avatar_url,
          email: line.email,
          email_verified_at: line.email_verified ? now : null,
          state: line.state,
          password_hash: hash,
          created_at: line.created_at ?? now,
          updated_at: now,
        },
        links: line.links.map((link) => ({
          provider: link.provider,
          subject: link.subject,
          identity_id: id,
          verified_at: link.verified ? now : null,
          linked_at: now,
        })),
        password: password.kind === 'hash' ? password.scheme : password.kind,
      };
    }),
  );
}

async function writeBatch(
  deps: ImportDeps,
  actor: Actor,
  lines: ImportLine[],
  summary: ImportSummary,
): Promise<void> {
  const prepared = await prepare(deps, lines);
  const byLine = new Map(prepared.map((entry) => [entry.line, entry]));
  for (let attempt = 1; ; attempt += 1) {
    try {
      const sorted = await deps.store.transaction(async (tx) => {
        // Checked again inside the transaction: the server may have registered a username
        // or claimed a link since the first check.
        const found = await sortAgainstStore(tx, lines);
        const writing = found.fresh.map((line) => byLine.get(line)!);
        await tx.insertIdentities(writing.map((entry) => entry.identity));
        await tx.insertLinks(writing.flatMap((entry) => entry.links));
        const now = deps.clock.now();
        await tx.insertAuditRecords(
          writing.map((entry) =>
            auditRecord(
              actor,
              {
                action: 'identity_import',
                target_identity: entry.identity.id,
                details: { password: entry.password, links: entry.links.length },
              },
              now,
            ),
          ),
        );
        return found;
      });
      summary.imported += sorted.fresh.length;
      summary.skipped += sorted.existing.length;
      summary.failed.push(...sorted.conflicting);
      for (const line of sorted.fresh) {
        const kind = byLine.get(line)!.password;
        summary.passwords[kind] = (summary.passwords[kind] ?? 0) + 1;
      }
      return;
    } catch (error) {
      // A concurrent insert won between the check and the write: the batch rolled back
      // whole, and the next check sees the winner.
      if (!(error instanceof UniqueViolation) || attempt === ATTEMPTS) throw error;
    }
  }
}
