import { validationError } from '../errors.js';
import { isAcceptedText } from '../text.js';

const MAX_LENGTH = 2048;

// Spaces, control characters and backslashes are where URL parsers (ours, the browser's,
// a proxy's) disagree about which host a string names; none occur in a URL an honest
// client builds, so refusing them removes the whole class of parser tricks. Control
// characters are refused by the text rule (domain/text.ts), the rest here.
const SPACE_OR_BACKSLASH = /[ \\]/;

const REFUSED =
  'return_to must be an absolute http(s) URL on an allowed origin (SERVICE_RETURN_TO_ALLOWED)';

const refused = () => validationError(REFUSED, 'return_to_not_allowed');

/**
 * An allow-list entry is an origin (`https://app.example`) or an origin plus a path prefix
 * (`https://app.example/after-login`). A prefix matches whole path segments only, so
 * `/cb` allows `/cb` and `/cb/x` but not `/cbx`.
 */
function allows(entry: string, url: URL): boolean {
  let allowed: URL;
  try {
    allowed = new URL(entry);
  } catch {
    return false;
  }
  if (allowed.origin !== url.origin) return false;
  const prefix = allowed.pathname;
  if (prefix === '/' || url.pathname === prefix) return true;
  return url.pathname.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`);
}

/**
 * Checks a `return_to` against the allow-list and returns it in canonical form. The
 * service only ever redirects to this canonical string, never to the raw input, so what
 * was checked is exactly what the browser is sent to: `//evil`, `javascript:`,
 * `https://good@evil`, relative paths and the like never pass.
 */
export function resolveReturnTo(raw: string, allowList: readonly string[]): string {
  if (raw.length > MAX_LENGTH || !isAcceptedText(raw, 'line') || SPACE_OR_BACKSLASH.test(raw)) {
    throw refused();
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw refused();
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refused();
  if (url.username !== '' || url.password !== '') throw refused();
  if (!allowList.some((entry) => allows(entry, url))) throw refused();
  return url.href;
}
