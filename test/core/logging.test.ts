import BetterSqlite3 from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { consoleLog } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { RepeatGate } from '../../src/lib/repeat-gate.js';
import { REPEAT_WINDOW_MS } from '../../src/log.js';
import { OUTAGE_MESSAGES } from '../../src/service-log.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { createIdentity, createSession } from '../helpers/core.js';
import { describeEachDatabase } from '../helpers/databases.js';
import { captureLog } from '../helpers/log-capture.js';

/** Our own ids: a random per-process prefix of 8 URL-safe characters, a dash, a counter. */
const GENERATED = /^[A-Za-z0-9_-]{8}-[0-9a-z]+$/;

describeEachDatabase('X-Request-Id and the access log', (kind) => {
  const quiet = captureLog();
  const loud = captureLog();
  let t: TestApp;
  let logged: TestApp;
  let session: string;

  beforeAll(async () => {
    t = await createTestApp(kind, { SERVICE_LOG_LEVEL: 'info' }, undefined, quiet.logger);
    logged = await createTestApp(
      kind,
      {
        SERVICE_LOG_LEVEL: 'info',
        SERVICE_ACCESS_LOG: 'on',
        SERVICE_RETURN_TO_ALLOWED: 'https://app.example',
      },
      undefined,
      loud.logger,
    );
    session = (await createSession(logged, (await createIdentity(logged)).id)).token;
  });
  afterAll(async () => {
    await t?.close();
    await logged?.close();
  });

  const whoami = (app: TestApp, headers: Record<string, string | string[]> = {}) =>
    app.inject({ method: 'GET', url: '/v1/whoami', headers });

  it.each(['a', 'f81d4fae-7dec-11d0-a765-00a0c91e6bf6', 'trace:01.ab_CD-9', 'x'.repeat(128)])(
    'a well-formed id (%s) is taken and echoed',
    async (id) => {
      const response = await whoami(t, { 'x-request-id': id });
      expect(response.headers['x-request-id']).toBe(id);
    },
  );

  it.each([
    ['empty', ''],
    ['129 characters', 'x'.repeat(129)],
    ['a space', 'two words'],
    ['a quote', 'say"hi'],
    ['non-ASCII', 'réq'],
    ['markup', '<script>'],
    ['a JSON fragment', '","level":60'],
  ])('an id with %s is replaced by our own, never echoed', async (_, id) => {
    const response = await whoami(t, { 'x-request-id': id });
    const echoed = response.headers['x-request-id'];
    expect(echoed).toMatch(GENERATED);
    expect(echoed).not.toBe(id);
  });

  it('two ids sent in two headers are replaced', async () => {
    const response = await whoami(t, { 'x-request-id': ['one', 'two'] });
    expect(response.headers['x-request-id']).toMatch(GENERATED);
  });

  it('without an id each request gets its own, on every kind of answer', async () => {
    const answers = await Promise.all([
      whoami(t),
      whoami(t),
      t.inject({ method: 'GET', url: '/healthz' }),
      t.inject({ method: 'GET', url: '/v1/nowhere' }),
      t.call('GET', '/v1/identities?username=x', 'not-a-token'),
      t.inject({ method: 'POST', url: '/v1/sessions/verify', payload: 'not json' }),
    ]);
    expect(answers.map((answer) => answer.statusCode)).toEqual([401, 401, 200, 404, 401, 401]);
    const ids = answers.map((answer) => answer.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(GENERATED);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('writes no access line unless SERVICE_ACCESS_LOG is on', async () => {
    await whoami(t, { 'x-request-id': 'quiet-1' });
    await t.inject({ method: 'GET', url: '/v1/nowhere' });
    expect(quiet.lines).toEqual([]);
  });

  it('with SERVICE_ACCESS_LOG=on writes one line per request, without query or secrets', async () => {
    const reader = await logged.token('identity_read');
    const before = loud.lines.length;
    await whoami(logged, { cookie: `service_session=${session}`, 'x-request-id': 'acc-1' });
    await logged.inject({
      method: 'GET',
      url: '/v1/login?return_to=https%3A%2F%2Fapp.example%2Fsecret-path',
      headers: { accept: 'application/json', 'x-request-id': 'acc-2' },
    });
    await logged.inject({
      method: 'GET',
      url: '/v1/identities?username=nobody',
      headers: { authorization: `Bearer ${reader}`, 'x-request-id': 'acc-3' },
    });
    await logged.inject({
      method: 'GET',
      url: '/v1/no/such?x=1',
      headers: { 'x-request-id': 'acc-4' },
    });

    const lines = loud.lines.slice(before);
    expect(lines.map((line) => line.msg)).toEqual(['request', 'request', 'request', 'request']);
    const fields = ['reqId', 'method', 'route', 'path', 'status', 'client', 'service'];
    const picked = lines.map((line) =>
      Object.fromEntries(fields.filter((f) => f in line).map((f) => [f, line[f]])),
    );
    expect(picked).toEqual([
      { reqId: 'acc-1', method: 'GET', route: '/v1/whoami', status: 200, client: '127.0.0.1' },
      { reqId: 'acc-2', method: 'GET', route: '/v1/login', status: 200, client: '127.0.0.1' },
      {
        reqId: 'acc-3',
        method: 'GET',
        route: '/v1/identities',
        status: 404,
        client: '127.0.0.1',
        service: expect.stringMatching(/^svc-/),
      },
      { reqId: 'acc-4', method: 'GET', path: '/v1/no/such', status: 404, client: '127.0.0.1' },
    ]);
    for (const line of lines) expect(line.duration_ms).toBeTypeOf('number');
    const text = JSON.stringify(lines);
    for (const secret of [session, reader, 'secret-path', 'return_to']) {
      expect(text).not.toContain(secret);
    }
  });
});

describe('a request that logs [sqlite]', () => {
  const log = captureLog();
  let t: TestApp;
  let other: BetterSqlite3.Database;
  beforeAll(async () => {
    t = await createTestApp(
      'sqlite',
      { SERVICE_DB_TIMEOUT_MS: '200', SERVICE_LOG_LEVEL: 'info' },
      undefined,
      log.logger,
    );
    other = new BetterSqlite3(t.db.file!);
  });
  afterAll(async () => {
    other?.close();
    await t?.close();
  });

  it('puts its id on its line', async () => {
    const write = await t.token('identity_write');
    const identity = await createIdentity(t);
    other.exec('BEGIN IMMEDIATE');
    try {
      const response = await t.inject({
        method: 'PATCH',
        url: `/v1/identities/${identity.id}/profile`,
        headers: { authorization: `Bearer ${write}`, 'x-request-id': 'locked-out' },
        payload: { display_name: 'Blocked' },
      });
      expect(response.statusCode).toBe(504);
      expect(response.headers['x-request-id']).toBe('locked-out');
    } finally {
      other.exec('ROLLBACK');
    }
    const [line] = log.withMessage(OUTAGE_MESSAGES.timeout);
    expect(line).toMatchObject({ level: 40, reqId: 'locked-out', err: { type: 'StorageTimeout' } });
    expect(line?.err).toHaveProperty('message');
  });
});

describe('repeated outage lines', () => {
  afterEach(() => vi.useRealTimers());

  it('the first is written, the rest counted once per window, then the run ends', () => {
    vi.useFakeTimers();
    const gate = new RepeatGate(1000);
    const counts: number[] = [];
    const offer = () => gate.offer('lost', (held) => counts.push(held));
    expect(offer()).toBe('write');
    expect([offer(), offer(), offer()]).toEqual(['hold', 'hold', 'hold']);
    vi.advanceTimersByTime(1000);
    expect(counts).toEqual([3]);
    expect(offer()).toBe('hold');
    vi.advanceTimersByTime(1000);
    expect(counts).toEqual([3, 1]);
    // A window with nothing held ends the run: the next one is news again.
    vi.advanceTimersByTime(1000);
    expect(offer()).toBe('write');
    expect(gate.offer('other', () => undefined)).toBe('write');
  });

  it('go through the logger as one line, then a count; other lines are untouched', () => {
    vi.useFakeTimers();
    const log = captureLog();
    const error = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
      code: 'ECONNREFUSED',
    });
    for (let i = 0; i < 5; i += 1) {
      log.logger.error({ err: error }, OUTAGE_MESSAGES.connectionLost);
      log.logger.child({ reqId: `r${i}` }).warn(OUTAGE_MESSAGES.unavailable);
      log.logger.info('sweep done');
    }
    expect(log.withMessage('sweep done')).toHaveLength(5);
    expect(log.withMessage(OUTAGE_MESSAGES.connectionLost)).toEqual([
      expect.objectContaining({
        level: 50,
        err: expect.objectContaining({
          type: 'Error',
          code: 'ECONNREFUSED',
          message: 'connect ECONNREFUSED 127.0.0.1:5432',
        }),
      }),
    ]);
    expect(log.withMessage(OUTAGE_MESSAGES.unavailable)).toEqual([
      expect.objectContaining({ level: 40, reqId: 'r0' }),
    ]);
    vi.advanceTimersByTime(REPEAT_WINDOW_MS);
    expect(log.withMessage(OUTAGE_MESSAGES.connectionLost)[1]).toMatchObject({
      level: 50,
      repeated: 4,
      window_ms: REPEAT_WINDOW_MS,
    });
    const count = log.withMessage(OUTAGE_MESSAGES.unavailable)[1];
    expect(count).toMatchObject({ level: 40, repeated: 4 });
    // The count speaks for four requests: it carries none of their ids.
    expect(count).not.toHaveProperty('reqId');
  });
});

describe('redaction', () => {
  it('keeps passwords and tokens out of a line', () => {
    const log = captureLog();
    log.logger.info({ body: { password: 'hunter2', token: 'tok', csrf_token: 'c' } }, 'x');
    expect(log.lines[0]?.body).toEqual({
      password: '[Redacted]',
      token: '[Redacted]',
      csrf_token: '[Redacted]',
    });
  });
});

describe('SERVICE_ACCESS_LOG', () => {
  it('is off by default, on when asked', () => {
    expect(loadConfig({}).accessLog).toBe(false);
    expect(loadConfig({ SERVICE_ACCESS_LOG: 'on' }).accessLog).toBe(true);
    expect(loadConfig({ SERVICE_ACCESS_LOG: 'off' }).accessLog).toBe(false);
  });

  it.each([
    [{ SERVICE_ACCESS_LOG: 'yes' }],
    [{ SERVICE_ACCESS_LOG: 'ON ' }],
    [{ SERVICE_ACCESS_LOG: 'on', SERVICE_LOG_LEVEL: 'warn' }],
    [{ SERVICE_ACCESS_LOG: 'on', SERVICE_LOG_LEVEL: 'silent' }],
  ])('%o stops start-up naming the variable', (env) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(/SERVICE_ACCESS_LOG/);
  });
});

describe('the CLI log', () => {
  it('writes one readable line per error on stderr, never an object or a stack', () => {
    const printed: unknown[][] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args) => void printed.push(args));
    try {
      const error = Object.assign(new Error('Connection terminated unexpectedly\n  at x'), {
        code: '57P01',
      });
      consoleLog.error({ err: error }, OUTAGE_MESSAGES.connectionLost);
    } finally {
      spy.mockRestore();
    }
    expect(printed).toEqual([
      ['tessera: database connection lost: Connection terminated unexpectedly (57P01)'],
    ]);
  });
});
