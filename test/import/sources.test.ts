import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { cliSandbox, type CliSandbox, runCli } from '../helpers/cli.js';
import { auditEntries } from '../helpers/core.js';
import {
  createTestDatabase,
  describeEachDatabase,
  type DatabaseKind,
  postgresUrl,
} from '../helpers/databases.js';
import { cliEnvFor } from '../helpers/transfer.js';
import { betterAuthSchema, dropSourceSchemas, supabaseSchema } from './source-databases.js';

/**
 * `tessera identity import --from <system>`: each system's fixture (test/import/fixtures/,
 * in that system's own export format, hashes made by independent tools or, for
 * better-auth, by better-auth itself) imports; every user then signs in over HTTP with the
 * password the fixture was made with, or through the imported link; a second run changes
 * nothing.
 */

vi.setConfig({ testTimeout: 180_000 });

const FIXTURES = join(import.meta.dirname, 'fixtures');
const fixture = (...parts: string[]) => join(FIXTURES, ...parts);

interface Expected {
  users: Array<{
    username: string;
    email: string;
    email_verified: boolean;
    state: 'active' | 'disabled';
    password: string | null;
    links: Array<{ provider: string; subject: string }>;
    totp: boolean;
  }>;
  left_out?: number;
}

interface Summary {
  imported: number;
  skipped: number;
  failed: unknown[];
  passwords: Record<string, number>;
  source: {
    users: number;
    skipped_count: number;
    links: Record<string, number>;
    factors_not_carried: Record<string, number>;
    usernames_derived: number;
  };
}

const expectedOf = (folder: string): Expected =>
  JSON.parse(readFileSync(fixture(folder, 'expected.json'), 'utf8')) as Expected;

/**
 * How each source is run on the fixture: its name, its exports, what it reports. Each
 * export form runs once: files against SQLite; Supabase and better-auth read from a
 * PostgreSQL database against PostgreSQL (test/import/source-databases.ts loads the same
 * fixture into a scratch schema).
 */
const CASES: Array<{
  source: string;
  folder: string;
  on: DatabaseKind[];
  args(): Promise<string[]> | string[];
  /** Usernames the source itself has (the rest are derived from the email). */
  usernames: Record<string, string>;
  factors: Record<string, number>;
}> = [
  {
    source: 'kratos',
    folder: 'kratos',
    on: ['sqlite', 'postgres'],
    args: () => [fixture('kratos', 'identities.json')],
    usernames: {},
    factors: { totp: 3 },
  },
  {
    source: 'keycloak',
    folder: 'keycloak',
    on: ['sqlite', 'postgres'],
    args: () => [fixture('keycloak', 'demo-realm.json'), fixture('keycloak', 'demo-users-0.json')],
    usernames: { 'ada@example.org': 'ada.byron' },
    factors: { totp: 3 },
  },
  {
    source: 'auth0',
    folder: 'auth0',
    on: ['sqlite', 'postgres'],
    args: () => [
      fixture('auth0', 'users-export.json.gz'),
      fixture('auth0', 'password-hashes.json'),
    ],
    usernames: {},
    factors: { guardian: 3 },
  },
  {
    source: 'supabase',
    folder: 'supabase',
    on: ['sqlite'],
    args: () => [fixture('supabase', 'users_rows.csv'), fixture('supabase', 'identities_rows.csv')],
    usernames: {},
    factors: {},
  },
  {
    source: 'supabase',
    folder: 'supabase',
    on: ['postgres'],
    args: async () => [postgresUrl, '--schema', await supabaseSchema(fixture('supabase'))],
    usernames: {},
    factors: { totp: 3 },
  },
  {
    source: 'better-auth',
    folder: 'better-auth',
    on: ['sqlite'],
    args: () => [fixture('better-auth', 'app.db')],
    usernames: {},
    factors: { totp: 3 },
  },
  {
    source: 'better-auth',
    folder: 'better-auth',
    on: ['postgres'],
    args: async () => [
      postgresUrl,
      '--schema',
      await betterAuthSchema(fixture('better-auth', 'app.db')),
    ],
    usernames: {},
    factors: { totp: 3 },
  },
];

/** A fresh Tessera listening on a port, and the CLI's environment for its database. */
async function target(kind: DatabaseKind, box: CliSandbox) {
  const db = await createTestDatabase(kind);
  const t = await createTestApp(kind, {}, db);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  const origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const tokens = {
    direct: await t.token('direct_auth'),
    link: await t.token('external_auth'),
    read: await t.token('identity_read'),
  };
  const post = async (path: string, token: string, body: unknown) => {
    const response = await fetch(`${origin}${path}`, {
      method: path.startsWith('/v1/identities') ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  return {
    t,
    env: cliEnvFor(box, db),
    lookup: (email: string) =>
      post(`/v1/identities?email=${encodeURIComponent(email)}`, tokens.read, undefined),
    password: (username: string, password: string) =>
      post('/v1/authenticate/password', tokens.direct, { username, password }),
    link: (provider: string, subject: string) =>
      post('/v1/authenticate/link', tokens.link, { provider, subject }),
    async close() {
      await t.close();
      await db.drop();
    },
  };
}

type Target = Awaited<ReturnType<typeof target>>;

async function importJson(env: Record<string, string>, source: string, args: string[]) {
  const result = await runCli(['identity', 'import', '--from', source, ...args, '--json'], env);
  expect(result.stderr).toBe('');
  expect(result.code, result.stdout).toBe(0);
  return JSON.parse(result.stdout) as Summary;
}

/** Every identity as the database holds it: a second run must leave all of it as it is. */
async function snapshot(t: TestApp) {
  return t.deps.store.exportPage({ afterId: null, limit: 1000 });
}

/** Users checked with a wrong password too: enough to show a hash does not take anything. */
const WRONG_PASSWORD_CHECKS = 3;

/** Each expected user is there as the source had them, and signs in as they did there. */
async function expectEveryUserSignsIn(
  to: Target,
  expected: Expected,
  usernames: Record<string, string>,
) {
  await Promise.all(
    expected.users.map(async (user, index) => {
      const found = await to.lookup(user.email);
      expect(found.status, user.email).toBe(200);
      expect(found.body).toMatchObject({
        username: usernames[user.email] ?? user.username,
        email: user.email,
        email_verified: user.email_verified,
        state: user.state,
      });
      const username = found.body.username as string;
      if (user.password !== null) {
        if (index < WRONG_PASSWORD_CHECKS || user.state === 'disabled') {
          const wrong = await to.password(username, `${user.password}!`);
          expect(wrong.body.error, `${username}, a wrong password`).toBe('invalid_credentials');
        }
        const signIn = await to.password(username, user.password);
        if (user.state === 'active') {
          expect(signIn.status, `${username} signs in`).toBe(200);
          // Rehashed with Tessera's argon2id on that first sign-in.
          const record = await to.t.deps.store.findIdentityByUsername(username);
          expect(record!.password_hash!.startsWith('imported:')).toBe(false);
        } else {
          // Refused only after the password verified (a wrong one is invalid_credentials).
          expect(signIn.body.error, `${username} is disabled`).toBe('identity_disabled');
        }
      }
      for (const link of user.links) {
        const viaLink = await to.link(link.provider, link.subject);
        if (user.state === 'active') {
          expect(viaLink.status, `${username} through ${link.provider}`).toBe(200);
          expect(viaLink.body.created).toBe(false);
          expect((viaLink.body.session as { identity: { id: string } }).identity.id).toBe(
            found.body.id,
          );
        } else {
          expect(viaLink.body.error).toBe('identity_disabled');
        }
      }
    }),
  );
}

describeEachDatabase('tessera identity import --from', (kind) => {
  let box: CliSandbox;
  beforeAll(() => {
    box = cliSandbox();
  });
  afterAll(() => box?.remove());

  afterAll(() => dropSourceSchemas());

  for (const c of CASES.filter((candidate) => candidate.on.includes(kind))) {
    it(`${c.source}: the fixture imports, every user signs in, a second run changes nothing`, async () => {
      const to = await target(kind, box);
      try {
        const expected = expectedOf(c.folder);
        const args = await c.args();
        const first = await importJson(to.env, c.source, args);
        expect(first.imported).toBe(expected.users.length);
        expect(first.skipped).toBe(0);
        expect(first.source.skipped_count).toBe(expected.left_out ?? 0);
        const links: Record<string, number> = {};
        for (const user of expected.users) {
          for (const link of user.links) links[link.provider] = (links[link.provider] ?? 0) + 1;
        }
        expect(first.source.links).toEqual(links);
        expect(first.source.factors_not_carried).toEqual(c.factors);
        expect(expected.users.length).toBeGreaterThanOrEqual(20);

        const audited = (await auditEntries(to.t)).filter((e) => e.action === 'identity_import');
        expect(audited).toHaveLength(expected.users.length);
        expect(audited[0]!.details).toMatchObject({ from: c.source });

        await expectEveryUserSignsIn(to, expected, c.usernames);

        const before = await snapshot(to.t);
        const second = await importJson(to.env, c.source, args);
        expect(second.imported).toBe(0);
        expect(second.skipped).toBe(expected.users.length);
        expect(await snapshot(to.t)).toEqual(before);
      } finally {
        await to.close();
      }
    });
  }
});
