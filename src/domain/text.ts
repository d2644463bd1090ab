import { validationError } from './errors.js';

/**
 * The one rule on the text Tessera accepts (docs/text-input.md), applied before anything
 * is stored, so SQLite and PostgreSQL store, and give back, exactly what was accepted.
 *
 * - `opaque`: any well-formed Unicode except NUL. An unpaired UTF-16 surrogate has no
 *   UTF-8 form: the drivers would store U+FFFD (SQLite one per byte of its CESU-8 form,
 *   PostgreSQL one per surrogate) while the answer echoed the input. PostgreSQL `text`
 *   cannot hold U+0000 at all. For provider and subject (opaque, docs/api.md 2.2) and passwords.
 * - `line`: `opaque`, and one line of display text: no control character (C0, DEL, C1),
 *   no line or paragraph separator, and no bidirectional embedding, override or isolate
 *   control, whose effect runs past the end of the field into whatever text a log line,
 *   a terminal or a page puts after it ("Trojan Source"). Marks that carry no such state
 *   (LRM, RLM, zero-width joiners, combining marks) stay allowed: scripts and emoji need
 *   them.
 */
export type TextKind = 'opaque' | 'line';

const NOT_ON_ONE_LINE = /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

const PROBLEM: Record<TextKind, string> = {
  opaque: 'must be valid UTF-8 text without NUL characters',
  line:
    'must be one line of valid UTF-8 text, without control characters (U+0000-U+001F, ' +
    'U+007F-U+009F, U+2028, U+2029) or bidirectional controls (U+202A-U+202E, U+2066-U+2069)',
};

export function isAcceptedText(value: string, kind: TextKind): boolean {
  if (!value.isWellFormed()) return false;
  return kind === 'opaque' ? !value.includes('\u0000') : !NOT_ON_ONE_LINE.test(value);
}

/** Returns `value` unchanged, or throws 422 `validation_error` naming `field`. */
export function requireText(field: string, value: string, kind: TextKind): string {
  if (!isAcceptedText(value, kind)) throw validationError(`${field} ${PROBLEM[kind]}`);
  return value;
}
