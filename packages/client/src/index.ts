/**
 * @tessera/client: a typed client for Tessera's HTTP API (Node 20+). The browser part is
 * `@tessera/client/browser`; session middleware is in `/express`, `/fastify` and `/next`.
 */
export {
  createTesseraClient,
  type CallOptions,
  type RawClient,
  type TesseraClient,
  type TesseraClientOptions,
} from './client.js';
export { TesseraError, isTesseraError, RETRYABLE } from './errors.js';
export { loginPageUrl } from './login-url.js';
export {
  createSessionGuard,
  readCookie,
  type GuardDecision,
  type GuardRequest,
  type SessionGuard,
  type SessionGuardOptions,
  type SessionOutcome,
  type TesseraRequestSession,
} from './session-guard.js';
export {
  TOKEN_PREFIX,
  checkToken,
  crc32,
  isAcceptableToken,
  type TokenCheck,
  type TokenKind,
} from './tokens.js';
export type { RetryOptions, TransportOptions } from './transport.js';
export type * from './types.js';
