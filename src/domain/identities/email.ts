import { type EmailProblem, canonicalEmail } from '../../lib/email-address.js';
import { validationError } from '../errors.js';
import { requireText } from '../text.js';

/**
 * Email addresses on identities (docs/api.md 2.1, "Email addresses"): one canonical form
 * (lib/email-address.ts), so that uniqueness is a plain UNIQUE index that SQLite and
 * PostgreSQL enforce alike, and every spelling of an address finds it.
 */
const RULE =
  'must be an address like name@example.com: at most 254 characters, at most 64 before the @, ' +
  "ASCII letters, digits and !#$%&'*+/=?^_`{|}~- in dot-separated parts before the @, and a domain " +
  'name with a top-level domain after it (an internationalised domain is accepted)';

/** Far above any valid address in any spelling; bounds the work done on hostile input. */
const MAX_INPUT = 1024;

function problemText(problem: EmailProblem): string {
  switch (problem.kind) {
    case 'at_signs':
      return `must hold exactly one @ (${problem.count} given)`;
    case 'local_not_ascii':
      return 'must be ASCII before the @ (internationalised local parts are not accepted)';
    case 'no_domain':
      return 'has no valid domain name after the @';
    case 'invalid':
      return RULE;
  }
}

/** The canonical address, or a 422 `validation_error` saying what is wrong with it. */
export function requireEmail(raw: string, field = 'email'): string {
  const text = requireText(field, raw.trim(), 'line');
  if (text.length > MAX_INPUT) throw validationError(`${field} ${RULE}`);
  const result = canonicalEmail(text);
  if ('problem' in result) throw validationError(`${field} ${problemText(result.problem)}`);
  return result.address;
}

/** For lookups: the canonical address, or null when `raw` cannot be one (so it names no one). */
export function parseEmail(raw: string): string | null {
  try {
    return requireEmail(raw);
  } catch {
    return null;
  }
}
