import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP pass-through the test can cut and restore: `stop()` destroys every open connection
 * and closes the listener (the database looks unreachable), `start()` listens again on the
 * same port.
 */
export class TcpProxy {
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
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
      client.pipe(upstream);
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

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const socket of this.#sockets) socket.destroy();
    this.#sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
