import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the front does with the answer of a request it passed on, once the backend has
 * answered it (so the backend has acted on it):
 * - `pass`: relays the answer;
 * - `lose`: cuts the client's connection: the answer is lost;
 * - `stall-body`: sends the answer's headers and half its body, then nothing more;
 * - `{ gateway }`: answers that status with a gateway's own JSON page instead.
 */
export type Fate = 'pass' | 'lose' | 'stall-body' | { gateway: 503 | 504 };

const GATEWAY_PAGES = { 503: 'Service Unavailable', 504: 'Gateway Timeout' } as const;
const HOP_BY_HOP = ['connection', 'keep-alive', 'transfer-encoding', 'content-length'];

/**
 * A real HTTP reverse proxy in front of a Tessera, as a load balancer would be, that loses
 * or stalls answers on cue: one `Fate` per request from `script`, `pass` once it is empty.
 * `forwarded` lists the requests the backend answered, in order (`METHOD /path`).
 */
export interface LossyFront {
  url: string;
  script: Fate[];
  forwarded: string[];
  /** How many requests the backend answered for this method and path suffix. */
  count(method: string, pathEnd: string): number;
  close(): Promise<void>;
}

export async function startLossyFront(backendUrl: string): Promise<LossyFront> {
  const backend = new URL(backendUrl);
  const held = new Set<ServerResponse>();
  const front: LossyFront = {
    url: '',
    script: [],
    forwarded: [],
    count: (method, pathEnd) =>
      front.forwarded.filter((r) => r.startsWith(`${method} `) && r.endsWith(pathEnd)).length,
    close: async () => {
      for (const res of held) res.socket?.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const body = Buffer.concat(await req.toArray());
      const answer = await forward(backend, req, body);
      front.forwarded.push(`${req.method} ${new URL(req.url!, backendUrl).pathname}`);
      const fate = front.script.shift() ?? 'pass';
      if (fate === 'lose') return void req.socket.destroy();
      if (typeof fate === 'object') {
        const page = JSON.stringify({ error: GATEWAY_PAGES[fate.gateway] });
        res.writeHead(fate.gateway, { 'content-type': 'application/json' });
        return void res.end(page);
      }
      const headers = { ...answer.headers };
      for (const name of HOP_BY_HOP) delete headers[name];
      res.writeHead(answer.status, { ...headers, 'content-length': answer.body.length });
      if (fate === 'pass') return void res.end(answer.body);
      held.add(res);
      res.write(answer.body.subarray(0, Math.floor(answer.body.length / 2)));
    })().catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  front.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return front;
}

/** Sends the request on to the backend and reads its whole answer. */
function forward(
  backend: URL,
  req: IncomingMessage,
  body: Buffer,
): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const upstream = httpRequest(
      {
        host: backend.hostname,
        port: backend.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: backend.host, connection: 'close' },
      },
      (answer) => {
        answer
          .toArray()
          .then((chunks) =>
            resolve({
              status: answer.statusCode!,
              headers: answer.headers,
              body: Buffer.concat(chunks as Buffer[]),
            }),
          )
          .catch(reject);
      },
    );
    upstream.on('error', reject);
    upstream.end(body);
  });
}
