import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

export interface RawAnswer {
  status: number;
  body: string;
}

const json = (status: number, error: string, message?: string): RawAnswer => ({
  status,
  body: JSON.stringify(message === undefined ? { error } : { error, message }),
});

export const NOT_FOUND = json(404, 'not_found');
export const UNAVAILABLE = json(503, 'unavailable');
/*
 * The two codes only the HTTP layer answers (docs/errors.md, "Parser and protocol
 * errors"). They exist because HTTP fixes these statuses, which no code of http/errors.ts
 * has: 400 for a request that is not HTTP/1.1 (RFC 9112 requires it for bad framing and a
 * missing Host), 408 for one that did not arrive in time.
 */
export const BAD_REQUEST = json(400, 'bad_request');
const REQUEST_TIMEOUT = json(408, 'request_timeout');
// Worded like the body limit's message (http/errors.ts): the same kind of limit.
const HEADERS_TOO_LARGE = json(
  422,
  'validation_error',
  `request headers exceed ${Math.floor(maxHeaderSize / 1024)} KiB`,
);

/** A request line with a well-formed method token (RFC 9110 5.6.2) that Node does not know. */
const UNKNOWN_METHOD = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ \S+ HTTP\/1\.[01]\r?$/;

type ParserError = Error & { code?: string; rawPacket?: unknown; bytesParsed?: number };

function answerFor(error: ParserError): RawAnswer {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return REQUEST_TIMEOUT;
    case 'HPE_HEADER_OVERFLOW':
      return HEADERS_TOO_LARGE;
    case 'HPE_INVALID_METHOD': {
      // Unknown methods answer like unknown routes (404); bytes that are no request line
      // at all (a TLS handshake on the plain port) are a bad request.
      const packet = error.rawPacket;
      if (!Buffer.isBuffer(packet)) return BAD_REQUEST;
      // The request line holding the failed byte (pipelined requests share the packet).
      const at = Math.min(error.bytesParsed ?? 0, packet.length);
      const start = at === 0 ? 0 : packet.lastIndexOf(0x0a, at - 1) + 1;
      const end = packet.indexOf(0x0a, at);
      const line = packet.subarray(start, end < 0 ? packet.length : end).toString('latin1');
      return UNKNOWN_METHOD.test(line) ? NOT_FOUND : BAD_REQUEST;
    }
    default:
      return BAD_REQUEST;
  }
}

/** A complete HTTP/1.1 response announcing the close, as bytes for a bare socket. */
export function rawResponse(answer: RawAnswer, headers: Record<string, string>): string {
  let head = `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\n`;
  head += 'content-type: application/json; charset=utf-8\r\n';
  head += `content-length: ${Buffer.byteLength(answer.body)}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  return `${head}connection: close\r\n\r\n${answer.body}`;
}

/** The same answer through Node's response object, closing the connection after it. */
export function sendClosing(
  res: ServerResponse,
  answer: RawAnswer,
  headers: Record<string, string>,
): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(answer.status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(answer.body),
    connection: 'close',
  });
  res.end(answer.body);
}

/** How long a refused client may go on sending before its connection is cut. */
const LINGER_MS = 2000;
/** How long a refusal waits for the answers still owed before it on the connection. */
const IN_TURN_MS = 10_000;
const answered = new WeakSet<Duplex>();

/**
 * Ends a connection after its last answer without losing that answer: closing a socket
 * with unread input makes the kernel send RST, and a client may then drop the response
 * it already received (a header over the limit leaves kilobytes unread). So the server
 * half-closes and keeps discarding input until the client closes or LINGER_MS passes.
 */
export function endAfterAnswer(socket: Duplex, response: string): void {
  answered.add(socket);
  if (socket.writable) socket.end(response);
  socket.resume();
  const cut = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('close', () => clearTimeout(cut));
}

/** The in-flight response of a connection (Node's own bookkeeping, as http-terminator reads it). */
export function inFlightResponse(socket: Duplex): ServerResponse | null {
  return (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage ?? null;
}

/**
 * Writes the refusal once the answers still owed on the connection are out, so that
 * answers stay in request order (pipelining). A request whose own input broke (its body
 * cut short, say) can never be answered by its route: the refusal is its answer, or,
 * when its answer already started, nothing can be said and the connection is cut. Both
 * `_httpMessage` and `parser.incoming` are Node's per-connection bookkeeping.
 */
function answerInTurn(socket: Duplex, response: string): void {
  const previous = inFlightResponse(socket);
  if (previous === null) {
    // Input that broke inside a request the route answered without waiting for its body
    // (a 401 before the body): a second answer would be read as another request's.
    const parsing = (socket as Duplex & { parser?: { incoming?: IncomingMessage | null } }).parser
      ?.incoming;
    return endAfterAnswer(socket, parsing && !parsing.complete ? '' : response);
  }
  if (!previous.req.complete) {
    if (previous.headersSent) return void socket.destroy();
    return endAfterAnswer(socket, response);
  }
  // Node's own 'finish' listener runs first and hands the socket to the next response.
  previous.once('finish', () => answerInTurn(socket, response));
}

/**
 * Node's `clientError`: the request could not be parsed, or did not arrive in time. The
 * parser cannot go on, so the connection ends; the client first gets a complete answer in
 * the error model saying so.
 */
export function clientErrorHandler(headers: Record<string, string>) {
  return function answerClientError(error: ParserError, socket: Duplex): void {
    // The parser goes on failing on later input: the first answer is the only one.
    if (error.code === 'ECONNRESET' || socket.destroyed || answered.has(socket)) return;
    answered.add(socket);
    const cut = setTimeout(() => socket.destroy(), IN_TURN_MS).unref();
    socket.once('close', () => clearTimeout(cut));
    answerInTurn(socket, rawResponse(answerFor(error), headers));
  };
}
