import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliJson, cliSandbox, type CliSandbox } from '../helpers/cli.js';
import { RawConnection, rawGet } from '../helpers/raw-http.js';
import { type LoggingServe as ServeProcess, startServe } from '../helpers/serve.js';

interface AuditRow {
  action: string;
  service_name: string | null;
  outcome: string;
}

function auditRows(file: string): AuditRow[] {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return db
      .prepare('SELECT action, service_name, outcome FROM audit_log ORDER BY at, id')
      .all() as AuditRow[];
  } finally {
    db.close();
  }
}

/** The head of a verify request; the body (`{"token":…}`) follows separately. */
function verifyHead(token: string, body: string, ...extra: string[]): string {
  return [
    'POST /v1/sessions/verify HTTP/1.1',
    'Host: tessera.test',
    `Authorization: Bearer ${token}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    ...extra,
    '',
    '',
  ].join('\r\n');
}

/**
 * Issue 12 items 1 and 2 through a real `tessera serve` (docs/operations.md, "Shutdown").
 * No timing is measured: each test would hang (and time out) where the drain waited for
 * a client, and the order of events shows the rest.
 */
describe('tessera serve on SIGTERM', () => {
  let box: CliSandbox;
  let env: Record<string, string>;
  let service: string;
  let session: string;
  const running: ServeProcess[] = [];

  beforeAll(async () => {
    box = cliSandbox();
    env = {
      ...box.env,
      // Read-path audit rows stay buffered until the shutdown writes them.
      SERVICE_AUDIT_FLUSH_MS: '600000',
      SERVICE_SWEEP_INTERVAL_MINUTES: '0',
    };
    ({ token: service } = await cliJson<{ token: string }>(
      ['svc', 'create', '--name', 'app', '--grant', 'direct_auth', '--grant', 'introspect'],
      env,
    ));
  });
  afterAll(() => {
    for (const server of running) server.child.kill('SIGKILL');
    box?.remove();
  });

  async function serve(extra: Record<string, string>): Promise<ServeProcess> {
    const server = await startServe({ ...env, ...extra });
    running.push(server);
    if (!session) {
      const res = await fetch(`${server.url}/v1/register-and-authenticate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${service}`, 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'drained', password: 'a long enough password' }),
      });
      expect(res.status).toBe(201);
      ({ token: session } = (await res.json()) as { token: string });
    }
    return server;
  }

  it('closes idle keep-alive connections, answers in-flight requests with Connection: close and late ones 503, writes the buffered audit rows', async () => {
    // A bound far beyond the test's own timeout: exiting at all shows nothing waited for it.
    const server = await serve({ SERVICE_SHUTDOWN_TIMEOUT_MS: '600000' });
    const body = JSON.stringify({ token: session });

    // An idle keep-alive connection, as a client pool leaves one.
    const idle = await RawConnection.open(server.port);
    idle.write(rawGet('/healthz'));
    expect((await idle.next()).headers.connection).toBe('keep-alive');

    // A request in flight: its handler has started (Node said 100 Continue), its body is
    // still to come.
    const inFlight = await RawConnection.open(server.port);
    inFlight.write(verifyHead(service, body, 'Expect: 100-continue'));
    expect((await inFlight.next()).status).toBe(100);

    // A request answered at once (no token: 401 before its body), whose body is still to
    // come: the connection only becomes idle during the drain.
    const early = await RawConnection.open(server.port);
    early.write(verifyHead('', body, 'Expect: 100-continue').replace(/Authorization.*\r\n/, ''));
    expect((await early.next()).status).toBe(100);
    expect((await early.next()).status).toBe(401);

    // A request that is only half received when SIGTERM comes: it completes during the drain.
    const late = await RawConnection.open(server.port);
    late.write(rawGet('/healthz') + 'POST /v1/sessions/verify HTTP/1.1\r\nHost: tessera.test\r\n');
    expect((await late.next()).status).toBe(200);

    server.child.kill('SIGTERM');
    await server.line('shutting down');

    // The idle connection is closed by the server, with nothing on it.
    expect(await idle.end()).toBe('');
    expect(idle.error).toBeUndefined();

    late.write(
      [
        `Authorization: Bearer ${service}`,
        'Content-Type: application/json',
        `Content-Length: ${body.length}`,
        '',
        body,
      ].join('\r\n'),
    );
    // 503; `Connection: close` once the listener is closed, keep-alive before (a client
    // told to close would connect again while the listener is still open). Either way the
    // server closes the connection: at once, or once it stays quiet.
    const refused = await late.next();
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body)).toEqual({ error: 'unavailable' });
    expect(await late.end()).toBe('');

    // Once its body is in, the early-answered connection is idle, and closed.
    early.write(body);
    expect(await early.end()).toBe('');

    inFlight.write(body);
    const answered = await inFlight.next();
    expect(answered.status).toBe(200);
    expect(answered.headers.connection).toBe('close');
    expect(await inFlight.end()).toBe('');

    // The client never closed the idle connection: the server did (FIN above), and exited.
    expect(await server.exited).toBe(0);

    const rows = auditRows(box.databaseFile);
    expect(rows.filter((row) => row.action === 'session_verify')).toEqual([
      { action: 'session_verify', service_name: 'app', outcome: 'ok' },
    ]);
    expect(rows.filter((row) => row.action === 'refused_while_stopping')).toEqual([
      { action: 'refused_while_stopping', service_name: 'app', outcome: 'unavailable' },
    ]);
    for (const connection of [idle, early, inFlight, late]) connection.destroy();
  });

  it('cuts a request that does not finish by SERVICE_SHUTDOWN_TIMEOUT_MS, then exits with the audit rows written', async () => {
    const server = await serve({ SERVICE_SHUTDOWN_TIMEOUT_MS: '100' });
    const body = JSON.stringify({ token: session });
    const verified = await fetch(`${server.url}/v1/sessions/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${service}`, 'content-type': 'application/json' },
      body,
    });
    expect(verified.status).toBe(200);

    // A client that starts a request and never sends its body.
    const stuck = await RawConnection.open(server.port);
    stuck.write(verifyHead(service, body, 'Expect: 100-continue'));
    expect((await stuck.next()).status).toBe(100);

    const before = auditRows(box.databaseFile).length;
    server.child.kill('SIGTERM');
    expect(await server.exited).toBe(0);
    await stuck.end();
    const added = auditRows(box.databaseFile).slice(before);
    expect(added).toContainEqual({ action: 'session_verify', service_name: 'app', outcome: 'ok' });
    stuck.destroy();
  });
});
