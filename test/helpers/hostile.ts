import { afterAll, beforeAll } from 'vitest';
import { GRANTS } from '../../src/domain/service-tokens/service-token.js';
import { createTestApp, type TestApp } from './app.js';
import { type DatabaseKind, postgresAvailable } from './databases.js';

/**
 * Strings that have broken text handling somewhere: each is put into every text field and
 * every path id (test/core/hostile-input.test.ts). Lengths at and over each field's limit
 * are added per field, since the limits differ.
 */
export const HOSTILE: [string, string][] = [
  ['plain text with a space', 'Plain Name'],
  ['the empty string', ''],
  ['NUL inside', 'a\u0000b'],
  ['NUL alone', '\u0000'],
  ['a lone high surrogate', 'a\ud800b'],
  ['a lone low surrogate', 'a\udc00b'],
  ['surrogates in the wrong order', '\udc00\ud83d'],
  ['a high surrogate at the end', 'name\ud83d'],
  ['C0 control (BEL)', 'a\u0007b'],
  ['a tab inside', 'a\tb'],
  ['a newline inside', 'a\nb'],
  ['CRLF and a header', 'a\r\nSet-Cookie: x=1'],
  ['ANSI escape sequence', '\u001b[31mred\u001b[0m'],
  ['DEL', 'a\u007fb'],
  ['C1 control (NEL)', 'a\u0085b'],
  ['C1 control (CSI)', 'a\u009b31mb'],
  ['right-to-left override', 'abc\u202edcba'],
  ['right-to-left isolate', 'a\u2067b\u2069'],
  ['left-to-right mark', 'a\u200eb'],
  ['line separator', 'a\u2028b'],
  ['paragraph separator', 'a\u2029b'],
  ['zero-width space inside', 'a\u200bb'],
  ['zero-width space alone', '\u200b'],
  ['emoji with zero-width joiner', '\u{1f469}\u200d\u{1f4bb}'],
  ['combining marks', 'e\u0301\u0302\u0303'],
  ['a combining mark alone', '\u0301'],
  ['zalgo (60 combining marks)', `Z${'\u0336\u0334\u0337'.repeat(20)}`],
  ['emoji (astral plane)', '\u{1f511}\u{1f600}'],
  ['mathematical letters (astral, NFKC changes them)', '\u{1d518}\u{1d52b}\u{1d526}'],
  ['fullwidth letters (NFKC changes them)', 'ｆｕｌｌｗｉｄｔｈ'],
  ['a ligature (NFKC changes it)', '\ufb01le'],
  ['the Kelvin sign (NFKC changes it)', '\u212aelvin'],
  ['circled digits (NFKC changes them)', '①②③'],
  ['literal %00', '%00'],
  ['literal %ff', '%ff'],
  ['dot segments', '../../etc/passwd'],
  ['backslashes', '..\\..\\x'],
  ['SQL quotes', "' OR '1'='1"],
  ['an SQL comment', 'x"; DROP TABLE identities; --'],
  ['HTML', '<script>alert(1)</script>'],
  ['spaces only', '   '],
  ['an ideographic space only', '\u3000'],
  ['a no-break space only', '\u00a0'],
  ['a leading BOM', '\ufeffname'],
  ['a BOM only', '\ufeff'],
  ['surrounding whitespace', '  \tname\n '],
  ['private use', '\ue000'],
  ['a noncharacter', '\uffff'],
  ['the replacement character', '\ufffd'],
  ['10 000 characters', 'x'.repeat(10_000)],
];

/**
 * Path ids as sent on the wire, beyond the percent-encoded HOSTILE strings: encodings that
 * do not decode to UTF-8, and ids at and over the router's 100-character limit.
 */
export const RAW_PATH_IDS: [string, string][] = [
  ['%ff (not UTF-8)', '%ff'],
  ['an encoded lone surrogate (CESU-8)', '%ED%A0%80'],
  ['an overlong NUL', '%C0%80'],
  ['a truncated sequence', '%E2%82'],
  ['a bare %', '%'],
  ['%zz', '%zz'],
  ['an encoded NUL', '%00'],
  ['encoded dot segments', '%2e%2e'],
  ['an encoded slash', '%2F'],
  ['an encoded question mark', 'x%3Fy'],
  ['a UUID with a NUL', '0190c7f8-0000-7000-8000-00000000000%00'],
  ['an upper-case unknown UUID', '0190C7F8-0000-7000-8000-00000000000A'],
  ['100 characters', 'a'.repeat(100)],
  ['100 encoded euro signs (100 characters)', '%E2%82%AC'.repeat(100)],
  ['101 characters', 'a'.repeat(101)],
];

/** The path or query encoding of a UTF-8 client: a lone surrogate goes as U+FFFD. */
export function encodeUtf8(value: string): string {
  return encodeURIComponent(value.toWellFormed());
}

export const DATABASE_KINDS: DatabaseKind[] = postgresAvailable
  ? ['sqlite', 'postgres']
  : ['sqlite'];

export const ON_EVERY_DATABASE = postgresAvailable
  ? '[sqlite and postgres]'
  : '[sqlite only: SERVICE_TEST_DATABASE_URL not set, the postgres half is skipped]';

export const ALLOWED_RETURN = 'https://app.example';

/** Limits far above what the suites send: only the inputs decide the answers. */
export const GENEROUS_ENV = {
  SERVICE_RETURN_TO_ALLOWED: ALLOWED_RETURN,
  SERVICE_RATE_LIMIT_LOGIN_IP: '1000000/60s',
  SERVICE_RATE_LIMIT_LOGIN_USERNAME: '1000000/15m',
  SERVICE_RATE_LIMIT_FLOW_CREATE_IP: '1000000/60s',
  SERVICE_RATE_LIMIT_CHALLENGE_IP: '1000000/60s',
  // What text a password may hold is under test here, not its strength
  // (test/password-policy has that): the strength estimate is off.
  SERVICE_PASSWORD_MIN_SCORE: '0',
};

export interface AppOnDatabase {
  kind: DatabaseKind;
  t: TestApp;
  /** A service token holding every grant. */
  all: string;
}

/**
 * One app per database, side by side, so each request can be put to both and the answers
 * compared. The returned array is filled in `beforeAll`.
 */
export function appsOnEveryDatabase(env: Record<string, string> = GENEROUS_ENV): AppOnDatabase[] {
  const apps: AppOnDatabase[] = [];
  beforeAll(async () => {
    for (const kind of DATABASE_KINDS) {
      const t = await createTestApp(kind, env);
      apps.push({ kind, t, all: await t.token(...GRANTS) });
    }
  });
  afterAll(async () => {
    for (const app of apps) await app.t.close();
  });
  return apps;
}
