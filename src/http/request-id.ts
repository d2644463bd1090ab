import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * A caller's id is taken as is only when it is 1-128 characters of `[A-Za-z0-9._:-]`:
 * no space, quote or control character can reach a log line or a response header through
 * it. Anything else is ignored, replaced by our own id, and never echoed.
 */
const WELL_FORMED = /^[A-Za-z0-9._:-]{1,128}$/;

const COUNTER_LIMIT = 0x7fffffff;

/**
 * Fastify's `genReqId`. Our ids are a random per-process prefix and a counter
 * (`Xb3kQ9aT-1a`): unique across instances and restarts, and as cheap as Fastify's own
 * `req-1`, where a random UUID per request would cost a crypto call on every whoami.
 */
export function requestIds(): (request: IncomingMessage) => string {
  let prefix = newPrefix();
  let counter = 0;
  return (request) => {
    const given = request.headers[REQUEST_ID_HEADER];
    if (typeof given === 'string' && WELL_FORMED.test(given)) return given;
    if (counter === COUNTER_LIMIT) {
      // A new prefix before the counter leaves V8's small integers.
      prefix = newPrefix();
      counter = 0;
    }
    counter += 1;
    return `${prefix}${counter.toString(36)}`;
  };
}

function newPrefix(): string {
  return `${randomBytes(6).toString('base64url')}-`;
}

/** Every answer carries its request's id, so a client can quote it and find its log lines. */
export function echoRequestId(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}
