import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyServerFactory, RawServerDefault } from 'fastify';
import type { AuditLog } from '../domain/audit/audit-log.js';
import {
  BAD_REQUEST,
  endAfterAnswer,
  inFlightResponse,
  NOT_FOUND,
  rawResponse,
  sendClosing,
  UNAVAILABLE,
} from './client-errors.js';
import { type CallerLookup, actorOf, callerOf } from './service-auth.js';

/**
 * The HTTP server under Fastify, and its shutdown (docs/operations.md, "Shutdown").
 *
 * Fastify's own server is replaced (its documented `serverFactory`) for what only the
 * request listener can do: answer a missing Host in the error model rather than with
 * Node's bare 400, and refuse requests that arrive while the server drains. Both are one
 * check per request; everything else here runs per connection or once at shutdown.
 */
export class Transport {
  #draining = false;
  readonly #sockets = new Set<Socket>();
  /** Audit rows of refused requests still waiting for their token lookup. */
  readonly #pending = new Set<Promise<void>>();

  constructor(
    private readonly deps: CallerLookup & { audit: AuditLog },
    private readonly headers: Record<string, string>,
  ) {}

  readonly serverFactory: FastifyServerFactory<RawServerDefault> = (handler, options) => {
    const route = (req: IncomingMessage, res: ServerResponse): void => {
      if (this.#draining) return this.#refuse(req, res);
      // RFC 9112 3.2: an HTTP/1.1 request without Host is a 400. Node would send its own
      // empty one (requireHostHeader), outside the error model.
      if (!req.headers.host && req.httpVersionMinor === 1 && req.httpVersionMajor === 1) {
        return sendClosing(res, BAD_REQUEST, this.headers);
      }
      handler(req, res);
    };
    const server: Server = createServer({ requireHostHeader: false }, route);
    // What Fastify sets on the server it creates itself (its options carry the defaults).
    const timeouts = options as Record<
      'keepAliveTimeout' | 'requestTimeout' | 'connectionTimeout',
      number
    >;
    server.keepAliveTimeout = timeouts.keepAliveTimeout;
    server.requestTimeout = timeouts.requestTimeout;
    server.setTimeout(timeouts.connectionTimeout);
    // Node answers an expectation other than 100-continue with a bare 417; RFC 9110 10.1.1
    // lets a server ignore it instead, which keeps the answer the route's own.
    server.on('checkExpectation', route);
    // No proxying here: CONNECT is a method no route has (404), and Node would otherwise
    // drop the connection without a word.
    server.on('connect', (_req: IncomingMessage, socket: Socket) =>
      endAfterAnswer(socket, rawResponse(NOT_FOUND, this.headers)),
    );
    server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    return server;
  };

  /**
   * Stops serving within `timeoutMs`: requests in flight finish and are answered with
   * `Connection: close`, idle keep-alive connections close at once, requests that arrive
   * meanwhile get 503 `unavailable`, and whatever is still open at the deadline is cut.
   */
  async shutdown(app: FastifyInstance, timeoutMs: number): Promise<void> {
    this.#draining = true;
    for (const socket of this.#sockets) {
      // Without this the answer says keep-alive and the client's next request races the
      // close (ECONNRESET); with it the client knows, and Node ends the connection.
      const res = inFlightResponse(socket);
      if (res && !res.headersSent) res.setHeader('connection', 'close');
    }
    const server = app.server;
    // Idle connections close now, and so does every connection that becomes idle later:
    // one whose answer had already started, or whose request body was still arriving
    // after its answer. Node closes idle connections once, when the server closes.
    server.closeIdleConnections();
    const idle = setInterval(() => server.closeIdleConnections(), 50);
    const deadline = setTimeout(() => server.closeAllConnections(), timeoutMs);
    try {
      await app.close();
    } finally {
      clearInterval(idle);
      clearTimeout(deadline);
    }
    await Promise.allSettled(this.#pending);
  }

  #refuse(req: IncomingMessage, res: ServerResponse): void {
    const header = req.headers.authorization;
    if (header === undefined) return sendClosing(res, UNAVAILABLE, this.headers);
    // Audited like any refused request that presented a token. The answer waits for the
    // lookup so that the row is queued before the connection (and so the drain) ends.
    const audited = callerOf(this.deps, header)
      .catch(() => null)
      .then((caller) => {
        this.deps.audit.enqueue(actorOf(caller), {
          action: 'refused_while_stopping',
          outcome: 'unavailable',
          details: { method: req.method, path: req.url?.split('?')[0] },
        });
      })
      .finally(() => {
        this.#pending.delete(audited);
        sendClosing(res, UNAVAILABLE, this.headers);
      });
    this.#pending.add(audited);
  }
}
