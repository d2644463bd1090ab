import { domainToASCII } from 'node:url';
import isEmailModule from 'validator/lib/isEmail.js';

// A CommonJS module: under NodeNext its default import is `module.exports`, which also
// carries the function as `default`.
const isEmail = isEmailModule.default;

/** Why a text is no address, for the caller to word. */
export type EmailProblem =
  | { kind: 'at_signs'; count: number }
  | { kind: 'local_not_ascii' }
  | { kind: 'no_domain' }
  | { kind: 'invalid' };

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * The canonical form of an email address (docs/api.md 2.1, "Email addresses"), or why
 * `text` is none. `text` is one line, already trimmed.
 *
 * - exactly one `@`: no quoted local parts, as in the WHATWG "valid email address" that
 *   browsers' `<input type=email>` accept;
 * - the domain through WHATWG URL's IDNA processing (`domainToASCII`, UTS #46): lowercased,
 *   width-folded and, when internationalised, its punycode A-label (`bücher.example` is
 *   `xn--bcher-kva.example`), so both spellings are one address;
 * - the local part ASCII and lowercased (the project's decision: an address is
 *   case-insensitive as a whole, although RFC 5321 lets a server tell case there);
 * - then validator's `isEmail` on that form: a dot-atom local part of at most 64 octets,
 *   a domain name with a top-level domain, at most 254 characters (RFC 5321 4.5.3.1).
 */
export function canonicalEmail(text: string): { address: string } | { problem: EmailProblem } {
  const parts = text.split('@');
  if (parts.length !== 2) return { problem: { kind: 'at_signs', count: parts.length - 1 } };
  const [local, domain] = parts as [string, string];
  if (!PRINTABLE_ASCII.test(local)) return { problem: { kind: 'local_not_ascii' } };
  const asciiDomain = domain === '' ? '' : domainToASCII(domain);
  if (asciiDomain === '') return { problem: { kind: 'no_domain' } };
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
  return valid ? { address } : { problem: { kind: 'invalid' } };
}
