import BetterSqlite3 from 'better-sqlite3';
import type { LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { expect } from 'vitest';
import type { TestApp } from '../helpers/app.js';
import { uniqueName } from '../helpers/core.js';
import type { TestDatabase } from '../helpers/databases.js';

export const UNKNOWN_ID = '0190c7f8-0000-7000-8000-000000000000';
export const TOKEN_PATTERN = /^tess_s_[A-Za-z0-9_-]{43}$/;

let pairs = 0;
/** A (provider, subject) pair no other test in the process uses. */
export function newPair(provider = 'github'): { provider: string; subject: string } {
  pairs += 1;
  return { provider, subject: `subject-${pairs}-${Math.random().toString(36).slice(2, 8)}` };
}

export function newSeed(name = uniqueName('linked')): { username: string; display_name: string } {
  return { username: name, display_name: `Display ${name}` };
}

export function signIn(t: TestApp, token: string, body: unknown): Promise<LightMyRequestResponse> {
  return t.call('POST', '/v1/authenticate/link', token, body);
}

export function attach(
  t: TestApp,
  token: string,
  identityId: string,
  body: unknown,
): Promise<LightMyRequestResponse> {
  return t.call('POST', `/v1/identities/${identityId}/links`, token, body);
}

export function detach(
  t: TestApp,
  token: string,
  identityId: string,
  body: unknown,
): Promise<LightMyRequestResponse> {
  return t.call('DELETE', `/v1/identities/${identityId}/links`, token, body);
}

/** Creates an identity through link sign-in and returns its id. */
export async function linkedIdentity(t: TestApp, token: string): Promise<string> {
  const res = await signIn(t, token, { ...newPair('seed-provider'), seed: newSeed() });
  expect(res.statusCode).toBe(201);
  return (res.json() as { session: { identity: { id: string } } }).session.identity.id;
}

/** Rows of one table, counted straight from the database the app runs on. */
export async function countRows(
  db: TestDatabase,
  table: 'identities' | 'links' | 'sessions',
): Promise<number> {
  if (db.kind === 'sqlite') {
    const raw = new BetterSqlite3(db.file!, { readonly: true });
    try {
      return (raw.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    } finally {
      raw.close();
    }
  }
  const client = new pg.Client({ connectionString: db.databaseUrl });
  await client.connect();
  try {
    const result = await client.query<{ n: string }>(
      `SELECT COUNT(*) AS n FROM ${db.schema}.${table}`,
    );
    return Number(result.rows[0]!.n);
  } finally {
    await client.end();
  }
}
