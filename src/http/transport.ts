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
 * During the drain, a connection with no request that has received nothing for QUIET_MS
 * is closed; the drain looks every QUIET_LOOK_MS. A client that just connected, or just
 * had an answer, sends its request well within that time.
 */
const QUIET_MS = 250;
const QUIET_LOOK_MS = 50;

/** Node's per-server connection list (http.Server tracks it for closeIdleConnections). */
function nodeConnections(server: Server): { idle(): { socket: Socket }[] } | undefined {
  const key = Object.getOwnPropertySymbols(server).find(
    (symbol) => symbol.description === 'http.server.connections',
  );
  return key === undefined
    ? undefined
    : (server as unknown as Record<symbol, { idle(): { socket: Socket }[] }>)[key];
}

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
  /** False once the drain has closed the listener (#closeListener). */
  #listenerOpen = true;
  /** When the last connection was accepted (#closeListener). */
  #lastConnectionAt = 0;
  /** Bytes each connection had received when the drain last saw that number change. */
  readonly #lastRead = new WeakMap<Socket, { bytes: number; at: number }>();

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
      this.#lastConnectionAt = Date.now();
      this.#sockets.add(socket);
      socket.once('close', () => this.#sockets.delete(socket));
    });
    // Node calls this itself as the server closes, and so does Fastify: both would cut a
    // connection whose request is on its way (a reset). Only quiet ones go (#closeQuiet).
    const closeIdle = server.closeIdleConnections.bind(server);
    server.closeIdleConnections = () => this.#closeQuiet(server, closeIdle);
    return server;
  };

  /**
   * Stops serving within `timeoutMs`: requests in flight finish and are answered with
   * `Connection: close`, quiet keep-alive connections close, requests that arrive
   * meanwhile get 503 `unavailable`, and whatever is still open at the deadline is cut.
   * No request is reset: each is answered, or (once the listener is closed) refused at
   * connect time (docs/operations.md, "Shutdown").
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
    // Connections close as they become quiet: those idle now, and those that become idle
    // later (an answer already started, a request body still arriving after its answer).
    // Each look follows a poll of the sockets (setImmediate), so that bytes already
    // received count as a request on their way.
    const look = () => setImmediate(() => server.closeIdleConnections());
    look();
    const looks = setInterval(look, QUIET_LOOK_MS);
    const deadline = setTimeout(() => server.closeAllConnections(), timeoutMs);
    try {
      await this.#closeListener(server, timeoutMs / 2);
      await app.close();
    } finally {
      clearInterval(looks);
      clearTimeout(deadline);
    }
    await Promise.allSettled(this.#pending);
  }

  /**
   * Closing the listener resets the connections the kernel has queued for it, and a
   * connect a client made just before SIGTERM may reach that queue some time later. So
   * the listener stays open (its requests answered 503) until no connection has come for
   * QUIET_MS, or for `boundMs` at most; then connects are refused. It closes right after a
   * poll of it (the check phase follows the poll). Resolves once every connection ended.
   */
  #closeListener(server: Server, boundMs: number): Promise<void> {
    // Never listening (requests injected in process): no queue, nothing to wait for.
    if (!server.listening) return Promise.resolve();
    const since = Date.now();
    return new Promise((resolve) => {
      const look = () => {
        const now = Date.now();
        const quiet = now - Math.max(since, this.#lastConnectionAt) >= QUIET_MS;
        if (!quiet && now - since < boundMs) return setTimeout(look, QUIET_LOOK_MS);
        setImmediate(() => {
          this.#listenerOpen = false;
          server.close(() => resolve());
        });
      };
      setTimeout(look, 0);
    });
  }

  /**
   * Closes the connections with nothing on them: no request started (Node's idle list)
   * and no byte received for QUIET_MS. A client may be sending on an idle keep-alive
   * connection, or on one it just opened, at this very moment, and closing it would reset
   * that request (Node's own closeIdleConnections does); one silent for so long is not.
   * Node's list is internal (http.Server's connections); without it, Node's own closing
   * is the fallback.
   */
  #closeQuiet(server: Server, closeIdle: () => void): void {
    const connections = nodeConnections(server);
    if (!this.#draining || connections === undefined) return closeIdle();
    for (const { socket } of connections.idle()) {
      const res = inFlightResponse(socket);
      if (res && !res.finished) continue;
      const read = socket.bytesRead;
      const last = this.#lastRead.get(socket);
      if (last === undefined || last.bytes !== read) {
        this.#lastRead.set(socket, { bytes: read, at: Date.now() });
      } else if (Date.now() - last.at >= QUIET_MS) {
        socket.destroy();
      }
    }
  }

  /**
   * 503 `unavailable`. While the listener is open the connection is kept: a client told to
   * close would connect again at once, and a connect queued when the listener closes is
   * reset. Once it is closed the answer closes the connection, and a new connect is refused.
   */
  #unavailable(res: ServerResponse): void {
    if (!this.#listenerOpen) return sendClosing(res, UNAVAILABLE, this.headers);
    if (res.headersSent || res.destroyed) return;
    res.writeHead(UNAVAILABLE.status, {
      ...this.headers,
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(UNAVAILABLE.body),
    });
    res.end(UNAVAILABLE.body);
  }

  #refuse(req: IncomingMessage, res: ServerResponse): void {
    const header = req.headers.authorization;
    if (header === undefined) return this.#unavailable(res);
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
        this.#unavailable(res);
      });
    this.#pending.add(audited);
  }
}
