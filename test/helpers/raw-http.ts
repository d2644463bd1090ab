import { connect, type Socket } from 'node:net';

/** One HTTP/1.1 response as it came off the wire. */
export interface RawResponse {
  status: number;
  statusLine: string;
  /** Lower-cased names; a repeated header keeps its last value. */
  headers: Record<string, string>;
  body: string;
}

/**
 * A client connection driven byte by byte, for what `fetch` cannot send or hides: malformed
 * requests, pipelining, keep-alive reuse, and whether the server closed the connection.
 */
export class RawConnection {
  #buffer = Buffer.alloc(0);
  #waiters: (() => void)[] = [];
  /** Set when the server ended its side (FIN) or the connection broke. */
  ended = false;
  /** The connection error, if any (ECONNRESET when the server reset it). */
  error: NodeJS.ErrnoException | undefined;
  readonly closed: Promise<void>;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.#buffer = Buffer.concat([this.#buffer, chunk]);
      this.#wake();
    });
    socket.on('end', () => {
      this.ended = true;
      this.#wake();
    });
    socket.on('error', (error) => {
      this.error = error;
      this.ended = true;
      this.#wake();
    });
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
  }

  static open(port: number, host = '127.0.0.1'): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, host);
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** The next complete response (1xx included); rejects if the connection ends first. */
  async next(): Promise<RawResponse> {
    for (;;) {
      const parsed = parseResponse(this.#buffer);
      if (parsed) {
        this.#buffer = this.#buffer.subarray(parsed.length);
        return parsed.response;
      }
      if (this.ended) {
        const rest = this.#buffer.toString('latin1');
        throw new Error(
          `connection ended (${this.error?.code ?? 'FIN'}) before a response: ${rest}`,
        );
      }
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  /** Resolves once the server has ended the connection; anything else it sent is returned. */
  async end(): Promise<string> {
    while (!this.ended) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    return this.#buffer.toString('latin1');
  }

  destroy(): void {
    this.socket.destroy();
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

function parseResponse(buffer: Buffer): { response: RawResponse; length: number } | undefined {
  const headEnd = buffer.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  const [statusLine = '', ...lines] = buffer.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const status = Number(statusLine.split(' ')[1]);
  let offset = headEnd + 4;
  let body = '';
  if (headers['transfer-encoding'] === 'chunked') {
    for (;;) {
      const lineEnd = buffer.indexOf('\r\n', offset);
      if (lineEnd < 0) return undefined;
      const size = parseInt(buffer.subarray(offset, lineEnd).toString('latin1'), 16);
      if (buffer.length < lineEnd + 2 + size + 2) return undefined;
      body += buffer.subarray(lineEnd + 2, lineEnd + 2 + size).toString('utf8');
      offset = lineEnd + 2 + size + 2;
      if (size === 0) break;
    }
  } else {
    const length = status < 200 || status === 204 ? 0 : Number(headers['content-length'] ?? 0);
    if (buffer.length < offset + length) return undefined;
    body = buffer.subarray(offset, offset + length).toString('utf8');
    offset += length;
  }
  return { response: { status, statusLine, headers, body }, length: offset };
}

/** `GET path` on a keep-alive connection, with the given extra header lines. */
export function rawGet(path: string, ...headers: string[]): string {
  return [`GET ${path} HTTP/1.1`, 'Host: tessera.test', ...headers, '', ''].join('\r\n');
}
