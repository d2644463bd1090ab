import { domainToASCII } from 'node:url';
import isEmailModule from 'validator/lib/isEmail.js';
import { validationError } from '../errors.js';
import { requireText } from '../text.js';

/**
 * Email addresses on identities (docs/api.md, "Email addresses"). One canonical form, so
 * that uniqueness is a plain UNIQUE index that SQLite and PostgreSQL enforce alike:
 *
 * - trimmed, then one line of text (docs/text-input.md);
 * - exactly one `@`: no quoted local parts, as in the WHATWG "valid email address" that
 *   browsers' `<input type=email>` accept;
 * - the domain through WHATWG URL's IDNA processing (`domainToASCII`, UTS #46): lowercased
 *   and, when internationalised, stored as its punycode A-label (`bücher.example` is
 *   `xn--bcher-kva.example`), so both spellings are one address;
 * - the local part ASCII and lowercased (the project's decision: an address is
 *   case-insensitive as a whole, although RFC 5321 lets a server tell case in the local part);
 * - then validator's `isEmail` on that form: dot-atom local part of at most 64 octets, a
 *   domain name with a top-level domain, at most 254 characters (RFC 5321 4.5.3.1).
 */
const RULE =
  'must be an address like name@example.com: at most 254 characters, at most 64 before the @, ' +
  "ASCII letters, digits and !#$%&'*+/=?^_`{|}~- in dot-separated parts before the @, and a domain " +
  'name with a top-level domain after it (an internationalised domain is accepted)';

/** Far above any valid address in any spelling; bounds the work done on hostile input. */
const MAX_INPUT = 1024;

const ASCII = /^[\x20-\x7e]*$/;

// A CommonJS module: under NodeNext its default import is `module.exports`, which also
// carries the function as `default`.
const isEmail = isEmailModule.default;

/** The canonical address, or a 422 `validation_error` saying what is wrong with it. */
export function requireEmail(raw: string, field = 'email'): string {
  const text = requireText(field, raw.trim(), 'line');
  if (text.length > MAX_INPUT) throw validationError(`${field} ${RULE}`);
  const parts = text.split('@');
  if (parts.length !== 2) {
    throw validationError(`${field} must hold exactly one @ (${parts.length - 1} given)`);
  }
  const [local, domain] = parts as [string, string];
  if (!ASCII.test(local)) {
    throw validationError(
      `${field} must be ASCII before the @ (internationalised local parts are not accepted)`,
    );
  }
  const asciiDomain = domain === '' ? '' : domainToASCII(domain);
  if (asciiDomain === '') throw validationError(`${field} has no valid domain name after the @`);
  const address = `${local.toLowerCase()}@${asciiDomain}`;
  const valid = isEmail(address, {
    allow_display_name: false,
    allow_utf8_local_part: false,
    allow_ip_domain: false,
    require_tld: true,
    ignore_max_length: false,
    // Quoted local parts ("john doe"@…) are valid RFC 5322 but not WHATWG: refused.
    blacklisted_chars: '"',
  });
  if (!valid) throw validationError(`${field} ${RULE}`);
  return address;
}

/** For lookups: the canonical address, or null when `raw` cannot be one (so it names no one). */
export function parseEmail(raw: string): string | null {
  try {
    return requireEmail(raw);
  } catch {
    return null;
  }
}
