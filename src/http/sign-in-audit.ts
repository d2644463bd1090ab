import type { FastifyRequest, onRequestHookHandler, onResponseHookHandler } from 'fastify';
import type { AuditLog } from '../domain/audit/audit-log.js';
import {
  recordSignIn,
  type SignInAttempt,
  signInAttempt,
} from '../domain/login-flows/sign-in-audit.js';
import type { SignInMethod } from '../domain/sign-in/method.js';
import { isWellFormedToken } from '../lib/tokens.js';

/** Each flow submission's audit facts, from its first hook to its response. */
const attempts = new WeakMap<FastifyRequest, SignInAttempt>();

export function attemptOf(request: FastifyRequest): SignInAttempt | undefined {
  return attempts.get(request);
}

/**
 * The hooks auditing `POST /v1/flows/{id}/<method>`. The row is written when the answer
 * has gone out, so its outcome is exactly the code the submitter got, whichever stage
 * refused it (Origin, body parsing, proxy header, flow, CSRF, limits, credentials). The
 * first hook must run before the Origin check, so a refused Origin is recorded too. A
 * path that cannot be a flow id is no sign-in attempt (404 without a lookup): no row.
 * The handler replaces the claim with the one its body makes, once the body was read.
 *
 * `signInMethod` is the method a first factor's route is for, known before anything is
 * read; a second factor's route leaves it out and its step notes the flow's first method.
 */
export function signInAuditHooks(
  audit: AuditLog,
  method: Pick<SignInMethod<string, unknown, never>, 'claim'>,
  signInMethod?: string,
): {
  onRequest: onRequestHookHandler;
  onResponse: onResponseHookHandler;
} {
  return {
    onRequest(request, _reply, done) {
      const id = (request.params as { id?: unknown }).id;
      if (isWellFormedToken('flow', id)) {
        attempts.set(request, signInAttempt(id, request.ip, method.claim(undefined), signInMethod));
      }
      done();
    },
    onResponse(request, reply, done) {
      const attempt = attempts.get(request);
      if (attempt) {
        const failed = reply.statusCode >= 400;
        recordSignIn(
          audit,
          attempt,
          attempt.outcome ?? request.errorCode ?? (failed ? String(reply.statusCode) : 'ok'),
        );
      }
      done();
    },
  };
}
