import type { LightMyRequestResponse } from 'fastify';
import { ERROR_STATUS } from '../../src/http/errors.js';

const STATUS_OF: Record<string, number> = ERROR_STATUS;
const ERROR_STATUSES = new Set(Object.values(ERROR_STATUS));
const SUCCESS_STATUSES = new Set([200, 201, 204, 303]);
const BODY_KEYS = new Set(['error', 'message', 'retry_after']);

export interface AnswerRules {
  /** The route answers browsers with the hosted HTML page (GET /v1/login, form posts). */
  pageAllowed?: boolean;
  /** A HEAD request: headers only, no body to read. */
  head?: boolean;
}

/**
 * Why an answer lies outside the error model (docs/errors.md), or null when it is inside:
 * a documented success, or a flat JSON `{ error, message?, retry_after? }` whose code is
 * documented and whose status is the one the table maps it to (`message` only on
 * validation_error, `retry_after` only on rate_limited), or, where allowed, the hosted
 * page with such a status. Never a 500, never a framework body.
 */
export function errorModelProblem(
  res: LightMyRequestResponse,
  rules: AnswerRules = {},
): string | null {
  const status = res.statusCode;
  const type = String(res.headers['content-type'] ?? '');
  if (status === 500) return `500: ${res.body.slice(0, 200)}`;
  if (/FST_ERR|statusCode/.test(res.body)) return `framework body: ${res.body.slice(0, 200)}`;
  if (status < 400) {
    return SUCCESS_STATUSES.has(status) ? null : `undocumented success status ${status}`;
  }
  if (type.startsWith('text/html')) {
    if (!rules.pageAllowed) return `HTML answer ${status} on a JSON route`;
    return ERROR_STATUSES.has(status) ? null : `page with status ${status}, not in the table`;
  }
  if (!type.startsWith('application/json')) return `content type "${type}" on ${status}`;
  if (rules.head) return ERROR_STATUSES.has(status) ? null : `HEAD answered ${status}`;
  let body: unknown;
  try {
    body = res.json();
  } catch {
    return `not JSON: ${res.body.slice(0, 200)}`;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return `not a flat object: ${res.body.slice(0, 200)}`;
  }
  const fields = body as Record<string, unknown>;
  const extra = Object.keys(fields).filter((key) => !BODY_KEYS.has(key));
  if (extra.length > 0) return `unexpected keys ${extra.join(', ')}`;
  const code = fields.error;
  if (typeof code !== 'string' || STATUS_OF[code] === undefined) {
    return `undocumented error code ${JSON.stringify(code)}`;
  }
  if (STATUS_OF[code] !== status) return `${code} answered with ${status}, not ${STATUS_OF[code]}`;
  // A message says what to do: always on validation_error, and on forbidden the grant the
  // token lacks (docs/errors.md); never on any other code.
  const mayTell = code === 'validation_error' || code === 'forbidden';
  if ('message' in fields && (!mayTell || typeof fields.message !== 'string')) {
    return `message on ${code}`;
  }
  if (code === 'validation_error' && typeof fields.message !== 'string') {
    return 'validation_error without a message';
  }
  if ('retry_after' in fields && code !== 'rate_limited') return `retry_after on ${code}`;
  return null;
}
