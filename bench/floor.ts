/**
 * The floor: the least a cookie session check can cost on this framework and database.
 * A bare Fastify route (no logger, hooks or schemas) that parses the `service_session`
 * cookie, SHA-256-hashes it, does one prepared unique-key lookup on the same database as
 * the measured server, and answers a JSON object of the same byte size as whoami's.
 *
 * Environment: FLOOR_PORT, SERVICE_DATABASE_URL (SQLite file or postgres://),
 * FLOOR_RESPONSE_BYTES (the size to match), SERVICE_DB_POOL_SIZE (as the server, default 10).
 */
import { hash } from 'node:crypto';
import cookie from '@fastify/cookie';
import BetterSqlite3 from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';

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

let lookup: (tokenHash: string) => Promise<SessionRow | undefined> | SessionRow | undefined;
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
  close = () => pool.end();
} else {
  const db = new BetterSqlite3(url.replace(/^sqlite:(\/\/)?/, ''));
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  const statement = db.prepare<[string], SessionRow>(`${SQL}?`);
  lookup = (tokenHash) => statement.get(tokenHash);
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
