import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { postgresUrl } from './databases.js';

/** Client data stopped on its way to the server (see `TcpProxy.holdClientData`). */
export interface HeldData {
  /** Resolves once a matching chunk has arrived and is being held. */
  readonly reached: Promise<void>;
  /** Lets the held chunk, and everything that queued behind it, through. */
  release(): void;
}

/**
 * A TCP pass-through the test can cut and restore: `stop()` destroys every open connection
 * and closes the listener (the database looks unreachable), `start()` listens again on the
 * same port.
 */
export class TcpProxy {
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  #hold: { match: (chunk: Buffer) => boolean; waiting: (() => void)[]; hit(): void } | undefined;
  port = 0;
  /** When false, connections are accepted and then left hanging (a black-holed network). */
  forward = true;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<number> {
    const server = createServer((client) => {
      this.#sockets.add(client);
      client.on('close', () => this.#sockets.delete(client));
      client.on('error', () => client.destroy());
      if (!this.forward) return;
      const upstream = createConnection({ host: this.targetHost, port: this.targetPort });
      this.#sockets.add(upstream);
      upstream.on('close', () => this.#sockets.delete(upstream));
      for (const socket of [client, upstream]) {
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      this.#forward(client, upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    if (address && typeof address === 'object') this.port = address.port;
    this.#server = server;
    return this.port;
  }

  /**
   * Holds the next chunk a client sends that `match` accepts (e.g. one query message) and
   * everything that connection sends after it, in order, until `release()`: the statement
   * reaches the server late, as over a congested network. One chunk, once.
   */
  holdClientData(match: (chunk: Buffer) => boolean): HeldData {
    let hit = () => undefined as void;
    const reached = new Promise<void>((resolve) => (hit = resolve));
    const hold = { match, waiting: [] as (() => void)[], hit };
    this.#hold = hold;
    return {
      reached,
      release: () => {
        if (this.#hold === hold) this.#hold = undefined;
        for (const flush of hold.waiting.splice(0)) flush();
      },
    };
  }

  #forward(client: Socket, upstream: Socket): void {
    let held: Buffer[] | undefined;
    let ended = false;
    client.on('data', (chunk: Buffer) => {
      const hold = this.#hold;
      if (held) {
        held.push(chunk);
      } else if (hold?.match(chunk)) {
        this.#hold = undefined;
        held = [chunk];
        hold.waiting.push(() => {
          for (const data of held ?? []) upstream.write(data);
          held = undefined;
          if (ended) upstream.end();
        });
        hold.hit();
      } else {
        upstream.write(chunk);
      }
    });
    client.on('end', () => {
      ended = true;
      if (!held) upstream.end();
    });
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** A started proxy in front of the test PostgreSQL, and the connection URL through it. */
export async function proxyToPostgres(): Promise<{ proxy: TcpProxy; url: URL }> {
  const target = new URL(postgresUrl);
  const proxy = new TcpProxy(target.hostname, Number(target.port || 5432));
  const url = new URL(postgresUrl);
  url.host = `127.0.0.1:${await proxy.start()}`;
  return { proxy, url };
}
