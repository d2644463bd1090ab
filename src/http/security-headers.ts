import { isIP } from 'node:net';
import type { onRequestHookHandler } from 'fastify';
import type { Config } from '../config.js';

/** One year; no `includeSubDomains`: other hosts of the operator's domain are not ours to pin. */
const HSTS = 'max-age=31536000';

/**
 * Headers on every answer: `nosniff` so no browser reads a JSON error as HTML or script,
 * and HSTS when the public origin is https (a browser only honours it over https, so it
 * passes harmlessly through the operator's TLS proxy).
 */
export function securityHeaders(config: Pick<Config, 'publicUrl'>): Record<string, string> {
  const headers: Record<string, string> = { 'x-content-type-options': 'nosniff' };
  if (config.publicUrl?.startsWith('https:')) headers['strict-transport-security'] = HSTS;
  return headers;
}

/**
 * The hook that sets them, registered once for every route. A callback hook with the
 * values fixed at start-up: on whoami and verify it costs a call and one or two property
 * stores on the reply's header object.
 */
export function securityHeadersHook(headers: Record<string, string>): onRequestHookHandler {
  const hsts = headers['strict-transport-security'];
  if (hsts === undefined) {
    return function nosniff(_request, reply, done) {
      reply.header('x-content-type-options', 'nosniff');
      done();
    };
  }
  return function nosniffAndHsts(_request, reply, done) {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('strict-transport-security', hsts);
    done();
  };
}

function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/**
 * Without SERVICE_PUBLIC_URL the own origin (allowed `return_to`, the origin check of the
 * login form) follows each request's Host header, which only a loopback listener can
 * trust not to come from anyone.
 */
export function publicUrlWarning(config: Pick<Config, 'publicUrl' | 'host'>): string | null {
  if (config.publicUrl !== null || isLoopback(config.host)) return null;
  return (
    'SERVICE_PUBLIC_URL is unset on a non-loopback listener: the own origin follows each ' +
    "request's Host header; set it to the URL browsers use"
  );
}
