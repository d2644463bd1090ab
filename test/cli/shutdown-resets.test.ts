import { Agent, request } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cliSandbox, type CliSandbox } from '../helpers/cli.js';
import { type DatabaseKind, describeEachDatabase } from '../helpers/databases.js';
import { createScratchDatabase, type ScratchDatabase } from '../helpers/postgres-admin.js';
import { type LoggingServe, startServe } from '../helpers/serve.js';

/** One request's fate: its status, or the code of the error the client saw. */
function outcomeOf(url: string, agent: Agent): Promise<string> {
  return new Promise((resolve) => {
    const req = request(`${url}/readyz`, { agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(String(res.statusCode)));
      res.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end();
  });
}

/**
 * Issue 22 item 8 (docs/operations.md, "Shutdown"): requests that reach `tessera serve`
 * around SIGTERM are answered (200, or 503 once the drain has begun) or, once the listener
 * is closed, refused at connect time; never reset. Node's own closing of idle connections
 * reset those whose request was on its way, and closing the listener reset the connections
 * still queued in the kernel.
 */
describeEachDatabase('tessera serve across SIGTERM', (kind: DatabaseKind) => {
  let box: CliSandbox;
  let scratch: ScratchDatabase | undefined;
  let server: LoggingServe | undefined;

  beforeAll(async () => {
    box = cliSandbox();
    if (kind === 'postgres') scratch = await createScratchDatabase();
  });
  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await scratch?.drop();
    box?.remove();
  });

  it('answers or refuses every request, resets none', async () => {
    server = await startServe({
      ...box.env,
      ...(scratch ? { SERVICE_DATABASE_URL: scratch.url } : {}),
      SERVICE_SWEEP_INTERVAL_MINUTES: '0',
    });
    const agent = new Agent({ keepAlive: true });
    // Idle keep-alive connections, as a client pool leaves them.
    const warm = await Promise.all(Array.from({ length: 30 }, () => outcomeOf(server!.url, agent)));
    expect(warm).toEqual(Array(30).fill('200'));

    // Thirty requests on those connections and sixty on new ones, all on their way when
    // SIGTERM comes (the new connections are opened once this turn of the loop ends).
    const burst = Promise.all(Array.from({ length: 90 }, () => outcomeOf(server!.url, agent)));
    await new Promise((resolve) => setImmediate(resolve));
    server.child.kill('SIGTERM');
    const outcomes = await burst;
    expect(await server.exited).toBe(0);
    agent.destroy();

    const counts: Record<string, number> = {};
    for (const outcome of outcomes) counts[outcome] = (counts[outcome] ?? 0) + 1;
    const unanswered = Object.keys(counts).filter(
      (outcome) => !['200', '503', 'ECONNREFUSED'].includes(outcome),
    );
    expect({ unanswered, counts }).toEqual({ unanswered: [], counts });
  });
});
