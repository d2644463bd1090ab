import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { TesseraError, createTesseraClient } from '@tessera/client';

/**
 * Retry, deadline and connection behaviour need answers Tessera only gives under failure
 * (503, 504, a hung or cut connection): a small HTTP server here plays them, one scripted
 * answer per request, and records the requests.
 */
type Answer = { status: number; body?: unknown } | 'hang' | 'cut';

describe('the client transport: retries, deadlines, connection reuse', () => {
  let server: Server;
  let baseUrl: string;
  let script: Answer[] = [];
  let requests: string[] = [];
  /** What the client sent, attempt by attempt (a deadline may end one before the server sees it). */
  let attempts: string[] = [];
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
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    script = [];
    requests = [];
    attempts = [];
    for (const res of hung.splice(0)) res.socket?.destroy();
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const delays: number[] = [];
  const client = (retries = 2, timeoutMs = 5_000) =>
    createTesseraClient({
      baseUrl,
      timeoutMs,
      retry: { retries, baseDelayMs: 10, maxDelayMs: 40 },
      fetch: (input, init) => {
        const request = new Request(input, init);
        attempts.push(`${request.method} ${new URL(request.url).pathname}`);
        return fetch(request);
      },
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
    expect(attempts).toHaveLength(3);
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
    expect(attempts).toHaveLength(3);
  });

  it('never retries another code', async () => {
    for (const answer of [
      { status: 500, body: { error: 'internal_error' } },
      { status: 401, body: { error: 'invalid_service_token' } },
      { status: 503, body: { error: 'forbidden' } },
    ]) {
      attempts = [];
      script = [answer, { status: 200 }];
      const error = await client()
        .readyz()
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: answer.body.error, status: answer.status });
      expect(attempts).toHaveLength(1);
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

  it('maps a JSON error body outside the error model to a documented code by its status', async () => {
    for (const [answer, code] of [
      [{ status: 503, body: { error: 'Service Unavailable' } }, 'unavailable'],
      [{ status: 504, body: { error: 'Gateway Timeout' } }, 'timeout'],
      [{ status: 502, body: { error: 'Bad Gateway' } }, 'internal_error'],
      [{ status: 429, body: { error: 'rate_limited', retry_after: 'soon' } }, 'internal_error'],
      [{ status: 404, body: { error: 'not_found', message: 42 } }, 'internal_error'],
      [{ status: 500, body: { error: ['internal_error'] } }, 'internal_error'],
    ] as const) {
      script = [answer];
      const error = await client(0)
        .readyz()
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(TesseraError);
      expect(error).toMatchObject({ code, status: answer.status, detail: undefined });
    }
  });

  it('retries a gateway’s 503 page for a read, as unavailable', async () => {
    script = [{ status: 503, body: { error: 'Service Unavailable' } }, { status: 200 }];
    expect(await client().readyz()).toEqual({});
    expect(attempts).toHaveLength(2);
  });

  it('ends an attempt at its deadline as timeout, and retries it when repeating is safe', async () => {
    script = ['hang', 'hang', 'hang'];
    const error = await client(2, 100)
      .getIdentity('x')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TesseraError);
    expect(error).toMatchObject({ code: 'timeout', status: 0 });
    expect(attempts).toHaveLength(3);
  });

  it('does not repeat a sign-in or registration that got no answer', async () => {
    script = ['cut', { status: 200 }];
    const error = await client()
      .register({ username: 'alice', password: 'correct horse battery staple' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unavailable', status: 0 });
    expect(attempts).toEqual(['POST /v1/register']);
    attempts = [];
    script = ['hang'];
    const timedOut = await client(2, 100)
      .authenticatePassword({ username: 'alice', password: 'correct horse battery staple' })
      .catch((e: unknown) => e);
    expect(timedOut).toMatchObject({ code: 'timeout', status: 0 });
    expect(attempts).toEqual(['POST /v1/authenticate/password']);
  });

  it('passes the caller’s own abort through unchanged', async () => {
    script = ['hang'];
    const controller = new AbortController();
    // A deadline far beyond the test's: on a loaded machine the request may reach the
    // server late, and the client's own timeout must not retry it before the abort.
    const pending = client(2, 120_000).getIdentity('x', { signal: controller.signal });
    // Abort once the server holds the request, so nothing of it reaches a later test.
    await vi.waitFor(() => expect(requests.length).toBeGreaterThan(0), { timeout: 20_000 });
    controller.abort();
    const error = await pending.catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(TesseraError);
    expect((error as Error).name).toBe('AbortError');
  });

  it('reuses one kept-alive connection across calls (Node’s fetch)', async () => {
    // A server of its own: a fresh origin, so undici's pool holds no socket from other tests.
    const ports = new Set<number>();
    const own = createServer((req, res) => {
      ports.add(req.socket.remotePort!);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    });
    await new Promise<void>((resolve) => own.listen(0, '127.0.0.1', resolve));
    const tessera = createTesseraClient({
      baseUrl: `http://127.0.0.1:${(own.address() as AddressInfo).port}`,
    });
    try {
      for (let i = 0; i < 10; i += 1) {
        await tessera.readyz();
        // undici returns the socket to its pool a few ticks after the body ends; a call
        // made in between would open a second one. Letting the loop turn makes it exact.
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } finally {
      own.closeAllConnections();
      await new Promise((resolve) => own.close(resolve));
    }
    expect(ports.size).toBe(1);
  });
});
