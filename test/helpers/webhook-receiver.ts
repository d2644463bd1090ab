import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  id: string;
  type: string;
  data: Record<string, unknown>;
  body: string;
}

/**
 * A webhook receiver over real HTTP: every request's signature is checked with the
 * standardwebhooks package's own verifier against `secret` (set once the webhook exists);
 * one that fails is answered 400 and counted in `unverified`. `answer` picks the status of
 * a verified one (200 unless changed: a receiver "down" answers 503).
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  unverified = 0;
  secret = '';
  /** A number: the status answered. `hold`: never answered (a delivery left in flight). */
  answer: (webhook: ReceivedWebhook) => number | 'hold' = () => 200;
  held = 0;
  #heldWaiters: (() => void)[] = [];
  #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let payload: { type: string; data: Record<string, unknown> };
        try {
          payload = new Webhook(receiver.secret).verify(
            body,
            req.headers as Record<string, string>,
          ) as typeof payload;
        } catch {
          receiver.unverified += 1;
          res.writeHead(400).end();
          return;
        }
        const webhook = { id: String(req.headers['webhook-id']), ...payload, body };
        const status = receiver.answer(webhook);
        if (status === 'hold') {
          receiver.held += 1;
          for (const wake of receiver.#heldWaiters.splice(0)) wake();
          return;
        }
        if (status >= 200 && status < 300) receiver.received.push(webhook);
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hook`;
  }

  /** Resolves once at least `count` deliveries are held. */
  async waitForHeld(count: number): Promise<void> {
    while (this.held < count) await new Promise<void>((wake) => this.#heldWaiters.push(wake));
  }

  types(): string[] {
    return this.received.map((webhook) => webhook.type);
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
