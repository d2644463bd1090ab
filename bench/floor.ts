/**
 * The floor: the least a request can cost on this framework and database, as bare Fastify
 * routes (no logger, hooks or schemas) on the same database as the measured server.
 *
 * - `GET /v1/whoami` parses the `service_session` cookie, SHA-256-hashes it, does one
 *   prepared unique-key lookup and answers a JSON object of the same byte size as whoami's.
 * - `POST /v1/sessions/verify` does what verify must: the bearer service token hashed and
 *   looked up (unique key, not revoked, the `introspect` grant), the JSON body parsed, its
 *   token hashed and looked up as whoami's cookie, and the same JSON answer.
 * - The login floor: `GET /v1/login` inserts a flow row (id and CSRF token) and answers
 *   them; `POST /v1/flows/{id}/password` reads the flow and checks its CSRF token, reads the
 *   identity by username, verifies the password with argon2id (the service's parameters
 *   and SERVICE_HASH_CONCURRENCY, against a hash made at start-up, as the argon2 bound),
 *   then in one transaction marks the flow completed and inserts a session row, and sets
 *   the session cookie. SQLite commits at its own `synchronous = FULL`: durable, as the
 *   service's. No rate limits, audit, security headers or schemas.
 * - The direct floor: `POST /v1/authenticate/password` checks the bearer service token as
 *   verify does (the `direct_auth` grant), parses the JSON body, reads the identity by
 *   username, verifies the password as the login floor, inserts a session row (one durable
 *   commit) and answers the token with a Session object of whoami's size.
 *
 * Environment: FLOOR_PORT, SERVICE_DATABASE_URL (SQLite file or postgres://),
 * FLOOR_RESPONSE_BYTES (the size to match), SERVICE_DB_POOL_SIZE (as the server, default 10),
 * SERVICE_ARGON2_*, SERVICE_HASH_CONCURRENCY (read through the service's config loader).
 */
import { hash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import cookie from '@fastify/cookie';
import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import BetterSqlite3 from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';
import { createLimiter } from '../src/lib/limiter.js';
import { benchArgon2 } from './lib/argon2.js';
import { BENCH_PASSWORD } from './lib/data.js';

interface SessionRow {
  id: string;
  identity_id: string;
  authenticated_via: string;
  issued_at: number;
  expires_at: number;
  revoked_at: number | null;
}

const url = process.env.SERVICE_DATABASE_URL ?? '';
const port = Number(process.env.FLOOR_PORT ?? 0);
const targetBytes = Number(process.env.FLOOR_RESPONSE_BYTES ?? 0);
const SQL =
  'SELECT id, identity_id, authenticated_via, issued_at, expires_at, revoked_at FROM sessions WHERE token_hash = ';

type Answer<T> = Promise<T> | T;
interface FlowRow {
  csrf_token: string;
  state: string;
  expires_at: number;
}
interface NewSession {
  id: string;
  tokenHash: string;
  identityId: string;
  now: number;
  expiresAt: number;
}
interface LoginQueries {
  insertFlow(id: string, csrf: string, now: number, expiresAt: number): Answer<unknown>;
  findFlow(id: string): Answer<FlowRow | undefined>;
  findIdentity(username: string): Answer<{ id: string } | undefined>;
  /** Marks the flow completed and inserts the session, in one transaction. */
  complete(flowId: string, session: NewSession): Answer<unknown>;
  insertSession(session: NewSession): Answer<unknown>;
}

const FLOW_INSERT = `INSERT INTO flows (id, csrf_token, return_to, state, failed_attempts, identity_id,
  first_method, issued_at, expires_at, token_format) VALUES `;
const FLOW_FIND = 'SELECT csrf_token, state, expires_at FROM flows WHERE id = ';
const IDENTITY_FIND = 'SELECT id FROM identities WHERE username = ';
const FLOW_COMPLETE = "UPDATE flows SET state = 'completed' WHERE id = ";
const SESSION_INSERT = `INSERT INTO sessions (id, token_hash, identity_id, authenticated_via, aal,
  issued_at, expires_at, token_format) VALUES `;
const SESSION_INSERT_PG = `${SESSION_INSERT}($1, $2, $3, 'password', 'aal1', $4, $5, 'crc32')`;

interface ServiceRow {
  grants: string;
  revoked_at: number | null;
}
const SERVICE_FIND = 'SELECT grants, revoked_at FROM service_tokens WHERE token_hash = ';

let lookup: (tokenHash: string) => Promise<SessionRow | undefined> | SessionRow | undefined;
let findService: (tokenHash: string) => Answer<ServiceRow | undefined>;
let login: LoginQueries;
let close: () => Promise<void> | void;
if (/^postgres(ql)?:\/\//.test(url)) {
  pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));
  const pool = new pg.Pool({
    connectionString: url,
    max: Number(process.env.SERVICE_DB_POOL_SIZE ?? 10),
  });
  const text = `${SQL}$1`;
  lookup = async (tokenHash) =>
    (await pool.query<SessionRow>({ name: 'floor_session', text, values: [tokenHash] })).rows[0];
  const one = async <T extends pg.QueryResultRow>(name: string, text: string, values: unknown[]) =>
    (await pool.query<T>({ name, text, values })).rows[0];
  findService = (tokenHash) => one<ServiceRow>('floor_service', `${SERVICE_FIND}$1`, [tokenHash]);
  login = {
    insertFlow: (id, csrf, now, expiresAt) =>
      one(
        'floor_flow_insert',
        `${FLOW_INSERT}($1, $2, NULL, 'created', 0, NULL, NULL, $3, $4, 'crc32')`,
        [id, csrf, now, expiresAt],
      ),
    findFlow: (id) => one<FlowRow>('floor_flow_find', `${FLOW_FIND}$1`, [id]),
    findIdentity: (username) =>
      one<{ id: string }>('floor_identity', `${IDENTITY_FIND}$1`, [username]),
    insertSession: (s) =>
      one('floor_session_insert', SESSION_INSERT_PG, [
        s.id,
        s.tokenHash,
        s.identityId,
        s.now,
        s.expiresAt,
      ]),
    async complete(flowId, s) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        await client.query({
          name: 'floor_flow_complete',
          text: `${FLOW_COMPLETE}$1`,
          values: [flowId],
        });
        await client.query({
          name: 'floor_session_insert',
          text: SESSION_INSERT_PG,
          values: [s.id, s.tokenHash, s.identityId, s.now, s.expiresAt],
        });
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    },
  };
  close = () => pool.end();
} else {
  const db = new BetterSqlite3(url.replace(/^sqlite:(\/\/)?/, ''));
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  const statement = db.prepare<[string], SessionRow>(`${SQL}?`);
  lookup = (tokenHash) => statement.get(tokenHash);
  const serviceStatement = db.prepare<[string], ServiceRow>(`${SERVICE_FIND}?`);
  findService = (tokenHash) => serviceStatement.get(tokenHash);
  const insertFlow = db.prepare(
    `${FLOW_INSERT}(?, ?, NULL, 'created', 0, NULL, NULL, ?, ?, 'crc32')`,
  );
  const findFlow = db.prepare<[string], FlowRow>(`${FLOW_FIND}?`);
  const findIdentity = db.prepare<[string], { id: string }>(`${IDENTITY_FIND}?`);
  const completeFlow = db.prepare(`${FLOW_COMPLETE}?`);
  const insertSession = db.prepare(`${SESSION_INSERT}(?, ?, ?, 'password', 'aal1', ?, ?, 'crc32')`);
  const complete = db.transaction((flowId: string, s: NewSession) => {
    completeFlow.run(flowId);
    insertSession.run(s.id, s.tokenHash, s.identityId, s.now, s.expiresAt);
  });
  login = {
    insertFlow: (id, csrf, now, expiresAt) => insertFlow.run(id, csrf, now, expiresAt),
    findFlow: (id) => findFlow.get(id),
    findIdentity: (username) => findIdentity.get(username),
    complete: (flowId, s) => complete.immediate(flowId, s),
    insertSession: (s) => insertSession.run(s.id, s.tokenHash, s.identityId, s.now, s.expiresAt),
  };
  close = () => {
    db.close();
  };
}

const PREFIX = 'tess_s_';

/** Same fields as the Session object; `username` is padded so the body has the target size. */
function body(row: SessionRow, pad: string) {
  return {
    id: row.id,
    identity: {
      id: row.identity_id,
      username: pad,
      display_name: 'Bench User',
      avatar_url: null,
      state: 'active',
      created_at: '2025-01-01T00:00:00.000Z',
      updated_at: '2025-01-01T00:00:00.000Z',
    },
    issued_at: new Date(row.issued_at).toISOString(),
    expires_at: new Date(row.expires_at).toISOString(),
    authenticated_via: row.authenticated_via,
  };
}

const sample: SessionRow = {
  id: '00000000-0000-7000-8000-000000000000',
  identity_id: '00000000-0000-7000-8000-000000000000',
  authenticated_via: 'password',
  issued_at: 0,
  expires_at: 0,
  revoked_at: null,
};
const unpadded = JSON.stringify(body(sample, '')).length;
const pad = 'x'.repeat(Math.max(0, targetBytes - unpadded));

const app = Fastify({ logger: false });
await app.register(cookie);
app.get('/v1/whoami', async (request, reply) => {
  const token = request.cookies.service_session;
  if (!token?.startsWith(PREFIX)) return reply.code(401).send({ error: 'invalid_token' });
  const row = await lookup(hash('sha256', token, 'base64url'));
  if (!row || row.revoked_at !== null || row.expires_at <= Date.now()) {
    return reply.code(401).send({ error: 'invalid_token' });
  }
  return body(row, pad);
});

/** The bearer service token's refusal (its status and code), or null when it holds `grant`. */
async function serviceRefusal(authorization: string | undefined, grant: string) {
  const bearer = /^Bearer (\S+)$/.exec(authorization ?? '')?.[1];
  const service = bearer ? await findService(hash('sha256', bearer, 'base64url')) : undefined;
  if (!service || service.revoked_at !== null) {
    return { status: 401, error: 'invalid_service_token' };
  }
  return service.grants.split(' ').includes(grant) ? null : { status: 403, error: 'forbidden' };
}

app.post<{ Body: { token?: unknown } | undefined }>(
  '/v1/sessions/verify',
  async (request, reply) => {
    const refused = await serviceRefusal(request.headers.authorization, 'introspect');
    if (refused) return reply.code(refused.status).send({ error: refused.error });
    const token = request.body?.token;
    if (typeof token !== 'string' || !token.startsWith(PREFIX)) {
      return reply.code(401).send({ error: 'invalid_token' });
    }
    const row = await lookup(hash('sha256', token, 'base64url'));
    if (!row || row.revoked_at !== null || row.expires_at <= Date.now()) {
      return reply.code(401).send({ error: 'invalid_token' });
    }
    return body(row, pad);
  },
);

const { config, options: argon2Options } = benchArgon2();
const passwordHash = await argon2Hash(BENCH_PASSWORD, argon2Options);
const hashing = createLimiter(config.hashConcurrency);
const FLOW_TTL_MS = 15 * 60_000;

/** The identity by username when the password is right (one argon2 verification either way). */
async function checkPassword(username: unknown, password: unknown) {
  const identity = await login.findIdentity(String(username));
  const valid = await hashing(() => argon2Verify(passwordHash, String(password), argon2Options));
  return identity && valid ? identity : undefined;
}

function newSession(identityId: string, now: number): { token: string; session: NewSession } {
  const token = `${PREFIX}${randomBytes(32).toString('base64url')}`;
  return {
    token,
    session: {
      id: randomUUID(),
      tokenHash: hash('sha256', token, 'base64url'),
      identityId,
      now,
      expiresAt: now + config.sessionTtlMs,
    },
  };
}

app.get('/v1/login', async () => {
  const id = randomUUID();
  const csrf = randomBytes(32).toString('base64url');
  const now = Date.now();
  await login.insertFlow(id, csrf, now, now + FLOW_TTL_MS);
  return {
    id,
    csrf_token: csrf,
    state: 'created',
    expires_at: new Date(now + FLOW_TTL_MS).toISOString(),
  };
});
app.post<{
  Params: { id: string };
  Body: { username: string; password: string; csrf_token: string };
}>('/v1/flows/:id/password', async (request, reply) => {
  const { username, password, csrf_token } = request.body;
  const flow = await login.findFlow(request.params.id);
  const now = Date.now();
  const given = Buffer.from(String(csrf_token));
  if (
    !flow ||
    flow.state !== 'created' ||
    flow.expires_at <= now ||
    given.length !== flow.csrf_token.length ||
    !timingSafeEqual(given, Buffer.from(flow.csrf_token))
  ) {
    return reply.code(403).send({ error: 'invalid_token' });
  }
  const identity = await checkPassword(username, password);
  if (!identity) return reply.code(401).send({ error: 'invalid_credentials' });
  const { token, session } = newSession(identity.id, now);
  await login.complete(request.params.id, session);
  reply.setCookie('service_session', token, {
    path: '/',
    httpOnly: true,
    secure: true,
    sameSite: 'lax',
  });
  return {
    state: 'completed',
    session: {
      id: session.id,
      identity_id: identity.id,
      expires_at: new Date(session.expiresAt).toISOString(),
    },
  };
});
app.post<{ Body: { username?: unknown; password?: unknown } | undefined }>(
  '/v1/authenticate/password',
  async (request, reply) => {
    const refused = await serviceRefusal(request.headers.authorization, 'direct_auth');
    if (refused) return reply.code(refused.status).send({ error: refused.error });
    const identity = await checkPassword(request.body?.username, request.body?.password);
    if (!identity) return reply.code(401).send({ error: 'invalid_credentials' });
    const { token, session } = newSession(identity.id, Date.now());
    await login.insertSession(session);
    const row: SessionRow = {
      id: session.id,
      identity_id: identity.id,
      authenticated_via: 'password',
      issued_at: session.now,
      expires_at: session.expiresAt,
      revoked_at: null,
    };
    return { session: body(row, pad), token };
  },
);
app.get('/healthz', async () => ({ status: 'ok' }));

const stop = () => {
  void app
    .close()
    .then(() => close())
    .finally(() => process.exit(0));
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
await app.listen({ host: '127.0.0.1', port });
