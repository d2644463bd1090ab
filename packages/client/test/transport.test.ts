import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TesseraError, createTesseraClient } from '@tessera/client';

/**
 * Retry, deadline and connection behaviour need answers Tessera only gives under failure
 * (503, 504, a hung or cut connection): a small HTTP server here plays them, one scripted
 * answer per request, and counts requests and TCP connections.
 */
type Answer = { status: number; body?: unknown } | 'hang' | 'cut';

describe('the client transport: retries, deadlines, connection reuse', () => {
  let server: Server;
  let baseUrl: string;
  let script: Answer[] = [];
  let requests: string[] = [];
  let connections = 0;
  const hung: ServerResponse[] = [];

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      requests.push(`${req.method} ${req.url}`);
      req.resume();
      const answer = script.shift() ?? { status: 200, body: { status: 'ok' } };
      if (answer === 'hang') return void hung.push(res);
      if (answer === 'cut') return void req.socket.destroy();
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body ?? {}));
    });
    server.on('connection', () => (connections += 1));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    script = [];
    requests = [];
    for (const res of hung.splice(0)) res.socket?.destroy();
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const delays: number[] = [];
  const client = (retries = 2, timeoutMs = 5_000) =>
    createTesseraClient({
      baseUrl,
      timeoutMs,
      retry: { retries, baseDelayMs: 10, maxDelayMs: 40 },
      sleep: (ms) => {
        delays.push(ms);
        return Promise.resolve();
      },
    });

  it('retries unavailable and timeout answers with growing, capped backoff, then succeeds', async () => {
    delays.length = 0;
    script = [
      { status: 503, body: { error: 'unavailable' } },
      { status: 504, body: { error: 'timeout' } },
      { status: 200, body: { status: 'ok' } },
    ];
    expect(await client().readyz()).toEqual({ status: 'ok' });
    expect(requests).toHaveLength(3);
    expect(delays).toHaveLength(2);
    expect(delays[0]).toBeLessThanOrEqual(10);
    expect(delays[1]).toBeLessThanOrEqual(20);
  });

  it('gives up after the retry bound with the last answer', async () => {
    script = Array.from({ length: 10 }, () => ({ status: 503, body: { error: 'unavailable' } }));
    const error = await client(2)
      .readyz()
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unavailable', status: 503 });
    expect(requests).toHaveLength(3);
  });

  it('never retries another code', async () => {
    for (const answer of [
      { status: 500, body: { error: 'internal_error' } },
      { status: 401, body: { error: 'invalid_service_token' } },
      { status: 503, body: { error: 'forbidden' } },
    ]) {
      requests = [];
      script = [answer, { status: 200 }];
      const error = await client()
        .readyz()
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: answer.body.error, status: answer.status });
      expect(requests).toHaveLength(1);
    }
  });

  it('reports a body that is not the error model by its status', async () => {
    script = [{ status: 502, body: 'Bad Gateway' }];
    expect(
      await client(0)
        .readyz()
        .catch((e: unknown) => e),
    ).toMatchObject({ code: 'internal_error', status: 502 });
  });

  it('ends an attempt at its deadline as timeout, and retries it when repeating is safe', async () => {
    script = ['hang', 'hang', 'hang'];
    const error = await client(2, 100)
      .getIdentity('x')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TesseraError);
    expect(error).toMatchObject({ code: 'timeout', status: 0 });
    expect(requests).toHaveLength(3);
  });

  it('does not repeat a sign-in or registration that got no answer', async () => {
    script = ['cut', { status: 200 }];
    const error = await client()
      .register({ username: 'alice', password: 'correct horse battery staple' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unavailable', status: 0 });
    expect(requests).toEqual(['POST /v1/register']);
    requests = [];
    script = ['hang'];
    const timedOut = await client(2, 100)
      .authenticatePassword({ username: 'alice', password: 'correct horse battery staple' })
      .catch((e: unknown) => e);
    expect(timedOut).toMatchObject({ code: 'timeout', status: 0 });
    expect(requests).toEqual(['POST /v1/authenticate/password']);
  });

  it('passes the caller’s own abort through unchanged', async () => {
    script = ['hang'];
    const controller = new AbortController();
    const pending = client().getIdentity('x', { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();
    const error = await pending.catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(TesseraError);
    expect((error as Error).name).toBe('AbortError');
  });

  it('reuses kept-alive connections across calls (Node’s fetch)', async () => {
    const tessera = client();
    const before = connections;
    for (let i = 0; i < 20; i += 1) await tessera.readyz();
    expect(requests).toHaveLength(20);
    // Without reuse each call opens one; undici's pool settles on one or two.
    expect(connections - before).toBeLessThan(5);
  });
});
