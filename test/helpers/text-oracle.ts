import type { LightMyRequestResponse } from 'fastify';
import { ALLOWED_RETURN } from './hostile.js';

/**
 * docs/text-input.md, restated here as the oracle the answers are held to (not imported
 * from src/domain/text.ts, so a change to the rule has to change this table too).
 */
export const oneLine = (s: string) =>
  s.isWellFormed() && !/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u.test(s);
export const opaque = (s: string) => s.isWellFormed() && !s.includes('\u0000');
export const codePoints = (s: string) => [...s].length;
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

export function canonicalUsername(raw: string): string | null {
  const name = raw.normalize('NFKC').toLowerCase();
  return /^[a-z0-9][a-z0-9._@+-]{2,63}$/.test(name) ? name : null;
}
export function displayName(raw: string): string | null {
  const name = raw.trim();
  return oneLine(name) && codePoints(name) >= 1 && codePoints(name) <= 128 ? name : null;
}
function isHttpUrl(raw: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(raw).protocol);
  } catch {
    return false;
  }
}
export const avatarUrl = (raw: string) => oneLine(raw) && raw.length <= 2048 && isHttpUrl(raw);
export function returnTo(raw: string): string | null {
  if (!oneLine(raw) || /[ \\]/.test(raw) || raw.length > 2048 || !isHttpUrl(raw)) return null;
  const url = new URL(raw);
  return url.origin === ALLOWED_RETURN && url.username === '' && url.password === ''
    ? url.href
    : null;
}
/**
 * An address at example.com (api.md 2.1, restated): trimmed, one line, one `@`, then a
 * dot-atom of ASCII atext of at most 64 characters before it; lowercased.
 */
export function canonicalEmailAtExample(raw: string): string | null {
  const text = raw.trim();
  if (!oneLine(text)) return null;
  const parts = text.split('@');
  if (parts.length !== 2 || parts[1]!.toLowerCase() !== 'example.com') return null;
  const atom = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+";
  const local = parts[0]!;
  const valid = new RegExp(`^${atom}(\\.${atom})*$`).test(local) && local.length <= 64;
  return valid ? `${local.toLowerCase()}@example.com` : null;
}
export const linkKey = (raw: string) => opaque(raw) && bytes(raw) >= 1 && bytes(raw) <= 255;

/** What one request came to, comparable across databases (ids and times left out). */
export interface Outcome {
  status: number;
  error?: string;
  message?: string;
  /** The field's value in the answer. */
  echoed?: string;
  /** The field's value read back afterwards. */
  stored?: string;
  page?: true;
}
/** An expected outcome; `field` is the name a validation message must start with. */
export type Expected = Omit<Outcome, 'message'> & {
  field?: string;
  /** Only "the same on every database" and the error model are checked. */
  anyError?: true;
  /** Another acceptable outcome. */
  or?: Expected;
};

export const refused = (field: string): Expected => ({
  status: 422,
  error: 'validation_error',
  field,
});
export const failed = (status: number, error: string): Expected => ({ status, error });
export const accepted = (status: number, value: string): Expected => ({
  status,
  echoed: value,
  stored: value,
});

/** Usernames (canonical) registered with PASSWORD: the same on every database. */
export interface World {
  registered: Set<string>;
}

export function outcomeOf(res: LightMyRequestResponse): Outcome {
  if (String(res.headers['content-type']).startsWith('text/html')) {
    return { status: res.statusCode, page: true };
  }
  if (res.statusCode === 204 || res.body === '') return { status: res.statusCode };
  const body = res.json() as Record<string, unknown>;
  return typeof body.error === 'string'
    ? { status: res.statusCode, ...(body as { error: string; message?: string }) }
    : { status: res.statusCode };
}

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The outcome of `res`; on `ok`, with the field's echoed and read-back values. */
export async function readBack(
  res: LightMyRequestResponse,
  ok: number,
  echoed: (body: Json) => string,
  stored: (body: Json) => Promise<string>,
): Promise<Outcome> {
  if (res.statusCode !== ok) return outcomeOf(res);
  const body = res.json() as Json;
  return { status: ok, echoed: echoed(body), stored: await stored(body) };
}

/** The answers of every database must agree, and match `expected`. */
export function compare(
  label: string,
  outcomes: Outcome[],
  expected: Expected,
  problems: string[],
): void {
  const [first] = outcomes;
  if (outcomes.some((o) => JSON.stringify(o) !== JSON.stringify(first))) {
    problems.push(`${label}: databases disagree: ${JSON.stringify(outcomes)}`);
    return;
  }
  const { message, ...got } = first!;
  const { field, anyError, or, ...want } = expected;
  if (anyError) return;
  // Drops the keys an expectation leaves undefined.
  const clean = (o: object) => JSON.stringify(JSON.parse(JSON.stringify(o)));
  if (clean(got) !== clean(want) && (or === undefined || clean(got) !== clean(or))) {
    problems.push(`${label}: got ${JSON.stringify(first)}, want ${JSON.stringify(expected)}`);
  } else if (field !== undefined && !message?.startsWith(`${field} `)) {
    problems.push(`${label}: message ${JSON.stringify(message)} does not name ${field}`);
  }
}
