import { setTimeout as delay } from 'node:timers/promises';
import * as rp from 'openid-client';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createTestDatabase,
  describeEachDatabase,
  postgresUrl,
  type TestDatabase,
} from '../helpers/databases.js';
import { addClient, addUser, PASSWORD, startOidcApp, type OidcApp } from './helpers.js';
import { authorizeSignedIn } from './http-flow.js';
import { redeem, relyingParty } from './relying-party.js';

const CALLBACK = 'https://app.example/callback';
/** Concurrent redemptions of one code or refresh token, spread over both instances. */
const RACERS = 8;

interface TokenAnswer {
  status: number;
  body: { access_token?: string; refresh_token?: string; error?: string };
}

/**
 * Codes and refresh tokens are single use on every database and every instance
 * (docs/oidc.md, "Lifetimes" and "Refresh tokens"): of N concurrent redemptions exactly one
 * gets tokens, the others are replays, answered `invalid_grant`, and end the grant. Two
 * instances on one database, raw token requests sent at once, half to each.
 */
describeEachDatabase('OIDC single-use codes and refresh tokens', (kind) => {
  let db: TestDatabase;
  let front: OidcApp;
  let back: OidcApp;
  let session: string;
  let clientId: string;
  let secret: string;
  let config: rp.Configuration;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    front = await startOidcApp(kind, { db });
    back = await startOidcApp(kind, { db, issuerPort: Number(new URL(front.origin).port) });
    await addUser(front);
    const direct = await front.token('direct_auth');
    const signedIn = await front.call('POST', '/v1/authenticate/password', direct, {
      username: 'alice',
      password: PASSWORD,
    });
    session = (signedIn.json() as { token: string }).token;
    const created = await addClient(front, { redirectUris: [CALLBACK], firstParty: true });
    clientId = created.client.client_id;
    secret = created.client_secret!;
    config = await relyingParty(front.issuer, clientId, secret);
  });
  afterAll(async () => {
    await back?.close();
    await front?.close();
    await db?.drop();
  });

  /** A token request sent to instance `i % 2`, as a load balancer would spread them. */
  async function tokenRequest(i: number, form: Record<string, string>): Promise<TokenAnswer> {
    const origin = (i % 2 === 0 ? front : back).origin;
    const response = await fetch(`${origin}/oidc/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${clientId}:${secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams(form).toString(),
    });
    return { status: response.status, body: (await response.json()) as TokenAnswer['body'] };
  }

  /**
   * RACERS token requests at once. On PostgreSQL the model's row is held locked (FOR UPDATE:
   * reads pass, writes wait) until every request waits to write it, so each has read it
   * unconsumed first: the interleaving that let them all through before, every time. (On
   * SQLite, where a write waits inside the synchronous driver, they simply race.)
   */
  async function race(
    kind: string,
    id: string,
    form: Record<string, string>,
  ): Promise<TokenAnswer[]> {
    const start = () =>
      Promise.all(Array.from({ length: RACERS }, (_, i) => tokenRequest(i, form)));
    if (db.kind !== 'postgres') return start();
    const locker = new pg.Client({ connectionString: postgresUrl });
    // Outside the locker's transaction, which would see one snapshot of pg_stat_activity.
    const watcher = new pg.Client({ connectionString: postgresUrl });
    await Promise.all([locker.connect(), watcher.connect()]);
    try {
      await locker.query('BEGIN');
      const locked = await locker.query<{ pid: number }>(
        `SELECT pg_backend_pid() AS pid FROM ${db.schema}.oidc_models WHERE kind = $1 AND id = $2 FOR UPDATE`,
        [kind, id],
      );
      expect(locked.rowCount).toBe(1);
      let settled = false;
      const racing = start().finally(() => (settled = true));
      let waiting = 0;
      while (!settled && waiting < RACERS) {
        await delay(5);
        // Waiting on the locker, or on one that waits on it (queued on the row's tuple lock).
        const { rows } = await watcher.query<{ n: number }>(
          `WITH RECURSIVE blocked(pid) AS (
             SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))
             UNION
             SELECT a.pid FROM pg_stat_activity a JOIN blocked b ON b.pid = ANY(pg_blocking_pids(a.pid))
           ) SELECT count(*)::int AS n FROM blocked`,
          [locked.rows[0]!.pid],
        );
        waiting = rows[0]!.n;
      }
      expect(waiting).toBe(RACERS);
      await locker.query('COMMIT');
      return await racing;
    } finally {
      await Promise.all([locker.end(), watcher.end()]);
    }
  }

  async function introspect(token: string): Promise<boolean> {
    return (await rp.tokenIntrospection(config, token)).active;
  }

  function tally(answers: TokenAnswer[]) {
    const winners = answers.filter((answer) => answer.status === 200);
    const errors = answers.filter((answer) => answer.status !== 200).map((a) => a.body.error);
    return { winners, errors };
  }

  it('redeems an authorization code once, whatever the race; the replays end the grant', async () => {
    const { auth, landedOn } = await authorizeSignedIn(config, CALLBACK, session);
    const code = new URL(landedOn).searchParams.get('code')!;
    const answers = await race('AuthorizationCode', code, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: CALLBACK,
      code_verifier: auth.verifier,
    });
    const { winners, errors } = tally(answers);
    expect(winners).toHaveLength(1);
    expect(errors).toEqual(Array(RACERS - 1).fill('invalid_grant'));
    // A code presented twice was stolen or replayed: every token of its grant is dead.
    const [winner] = winners;
    expect(await introspect(winner!.body.access_token!)).toBe(false);
    const refresh = await tokenRequest(0, {
      grant_type: 'refresh_token',
      refresh_token: winner!.body.refresh_token!,
    });
    expect(refresh).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('rotates a refresh token once, whatever the race; the replays end the grant', async () => {
    const { auth, landedOn } = await authorizeSignedIn(config, CALLBACK, session);
    const tokens = await redeem(config, auth, landedOn);
    expect(await introspect(tokens.access_token)).toBe(true);
    const answers = await race('RefreshToken', tokens.refresh_token!, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token!,
    });
    const { winners, errors } = tally(answers);
    expect(winners).toHaveLength(1);
    expect(errors).toEqual(Array(RACERS - 1).fill('invalid_grant'));
    // No forked chain lives on: the rotated pair and the original access token are dead.
    const [winner] = winners;
    expect(await introspect(winner!.body.access_token!)).toBe(false);
    expect(await introspect(tokens.access_token)).toBe(false);
    const next = await tokenRequest(1, {
      grant_type: 'refresh_token',
      refresh_token: winner!.body.refresh_token!,
    });
    expect(next).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('still redeems a code and rotates a refresh token for a single caller', async () => {
    const { auth, landedOn } = await authorizeSignedIn(config, CALLBACK, session);
    const code = new URL(landedOn).searchParams.get('code')!;
    const first = await tokenRequest(1, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: CALLBACK,
      code_verifier: auth.verifier,
    });
    expect(first.status).toBe(200);
    const rotated = await tokenRequest(0, {
      grant_type: 'refresh_token',
      refresh_token: first.body.refresh_token!,
    });
    expect(rotated.status).toBe(200);
    expect(await introspect(rotated.body.access_token!)).toBe(true);
    const again = await tokenRequest(1, {
      grant_type: 'refresh_token',
      refresh_token: rotated.body.refresh_token!,
    });
    expect(again.status).toBe(200);
  });
});
