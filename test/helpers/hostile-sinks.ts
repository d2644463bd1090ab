import { expect } from 'vitest';
import { PASSWORD, uniqueName } from './core.js';
import { type AppOnDatabase, encodeUtf8 } from './hostile.js';
import {
  accepted,
  avatarUrl,
  canonicalEmailAtExample,
  canonicalUsername,
  codePoints,
  displayName,
  type Expected,
  failed,
  type Json,
  opaque,
  type Outcome,
  outcomeOf,
  readBack,
  refused,
  type World,
} from './text-oracle.js';

export interface Context extends AppOnDatabase {
  /** An identity with PASSWORD, for sign-ins and profile updates. */
  base: { id: string; username: string };
}

export interface Sink {
  name: string;
  /** How a hostile string is put into an otherwise valid value of this field. */
  wrap?: (value: string) => string;
  /** Values at and over the field's limit, sent as they are. */
  limits?: [string, string][];
  run(ctx: Context, value: string): Promise<Outcome>;
  expect(value: string, world: World): Expected;
}

export async function getJson(ctx: Context, url: string): Promise<Json> {
  const res = await ctx.t.call('GET', url, ctx.all);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Json;
}
export const identityOf = (ctx: Context, id: string) => getJson(ctx, `/v1/identities/${id}`);
export const linksOf = async (ctx: Context, id: string) =>
  (await getJson(ctx, `/v1/identities/${id}/links`)) as unknown as Json[];

let pairs = 0;
export const freshKey = () => `k-${(pairs += 1)}-${Math.random().toString(36).slice(2, 8)}`;

export async function newFlow(ctx: Context): Promise<{ id: string; csrf_token: string }> {
  return getJson(ctx, '/v1/login') as Promise<{ id: string; csrf_token: string }>;
}

export function loginExpectation(rawUsername: string, world: World, okStatus: number): Expected {
  const name = canonicalUsername(rawUsername);
  return name !== null && world.registered.has(name)
    ? { status: okStatus }
    : failed(401, 'invalid_credentials');
}

const register = (ctx: Context, fields: Json) =>
  ctx.t.call('POST', '/v1/register', ctx.all, {
    username: uniqueName('h'),
    password: PASSWORD,
    ...fields,
  });

export const DISPLAY_NAME_LIMITS: [string, string][] = [
  ['128 astral code points', '\u{1d518}'.repeat(128)],
  ['129 astral code points', '\u{1d518}'.repeat(129)],
  ['128 code points of combining marks', `e${'\u0301'.repeat(127)}`],
];
export const URL_LIMITS = (origin: string): [string, string][] => [
  ['2048 characters', `${origin}/${'a'.repeat(2047 - origin.length)}`],
  ['2049 characters', `${origin}/${'a'.repeat(2048 - origin.length)}`],
];

/** The identity fields: registration, profile, lookup and password sign-in. */
export const IDENTITY_SINKS: Sink[] = [
  {
    name: 'POST /v1/register display_name',
    limits: DISPLAY_NAME_LIMITS,
    run: async (ctx, value) =>
      readBack(
        await register(ctx, { display_name: value }),
        201,
        (b) => b.display_name,
        async (b) => (await identityOf(ctx, b.id)).display_name,
      ),
    expect(value) {
      const name = displayName(value);
      return name === null ? refused('display_name') : accepted(201, name);
    },
  },
  {
    name: 'POST /v1/register avatar_url',
    wrap: (value) => `https://img.example/${value}`,
    limits: URL_LIMITS('https://img.example'),
    run: async (ctx, value) =>
      readBack(
        await register(ctx, { avatar_url: value }),
        201,
        (b) => b.avatar_url,
        async (b) => (await identityOf(ctx, b.id)).avatar_url,
      ),
    expect: (value) => (avatarUrl(value) ? accepted(201, value) : refused('avatar_url')),
  },
  {
    name: 'POST /v1/register username',
    limits: [
      ['64 characters', 'u'.repeat(64)],
      ['65 characters', 'u'.repeat(65)],
    ],
    run: async (ctx, value) =>
      readBack(
        await ctx.t.call('POST', '/v1/register', ctx.all, { username: value, password: PASSWORD }),
        201,
        (b) => b.username,
        async (b) => (await identityOf(ctx, b.id)).username,
      ),
    expect(value, world) {
      const name = canonicalUsername(value);
      if (name === null) return refused('username');
      if (world.registered.has(name)) return failed(409, 'username_taken');
      world.registered.add(name);
      return accepted(201, name);
    },
  },
  {
    name: 'POST /v1/register password (read back by signing in)',
    wrap: (value) => `kiwi-lantern-93 ${value}`,
    limits: [
      ['256 emoji (code points)', '\u{1f511}'.repeat(256)],
      ['257 emoji', '\u{1f511}'.repeat(257)],
    ],
    async run(ctx, value) {
      const username = uniqueName('pw');
      const res = await ctx.t.call('POST', '/v1/register', ctx.all, { username, password: value });
      if (res.statusCode !== 201) return outcomeOf(res);
      const again = await ctx.t.call('POST', '/v1/authenticate/password', ctx.all, {
        username,
        password: value,
      });
      return { status: 201, stored: String(again.statusCode) };
    },
    expect(value) {
      const ok = opaque(value) && codePoints(value) >= 8 && codePoints(value) <= 256;
      return ok ? { status: 201, stored: '200' } : refused('password');
    },
  },
  {
    name: 'POST /v1/register-and-authenticate display_name',
    limits: DISPLAY_NAME_LIMITS,
    run: async (ctx, value) =>
      readBack(
        await ctx.t.call('POST', '/v1/register-and-authenticate', ctx.all, {
          username: uniqueName('ra'),
          password: PASSWORD,
          display_name: value,
        }),
        201,
        (b) => b.session.identity.display_name,
        async (b) => (await identityOf(ctx, b.session.identity.id)).display_name,
      ),
    expect(value) {
      const name = displayName(value);
      return name === null ? refused('display_name') : accepted(201, name);
    },
  },
  ...(['display_name', 'avatar_url'] as const).map((field): Sink => ({
    name: `PATCH /v1/identities/{id}/profile ${field}`,
    wrap: field === 'avatar_url' ? (value) => `https://img.example/${value}` : undefined,
    limits: field === 'avatar_url' ? URL_LIMITS('https://img.example') : DISPLAY_NAME_LIMITS,
    run: async (ctx, value) =>
      readBack(
        await ctx.t.call('PATCH', `/v1/identities/${ctx.base.id}/profile`, ctx.all, {
          [field]: value,
        }),
        200,
        (b) => b[field],
        async () => (await identityOf(ctx, ctx.base.id))[field],
      ),
    expect(value) {
      if (field === 'avatar_url') {
        return avatarUrl(value) ? accepted(200, value) : refused(field);
      }
      const name = displayName(value);
      return name === null ? refused(field) : accepted(200, name);
    },
  })),
  {
    name: 'PUT /v1/identities/{id}/email',
    wrap: (value) => `h${value}x@example.com`,
    limits: [
      ['64 before the @', `${'e'.repeat(64)}@example.com`],
      ['65 before the @', `${'e'.repeat(65)}@example.com`],
    ],
    run: async (ctx, value) =>
      readBack(
        await ctx.t.call('PUT', `/v1/identities/${ctx.base.id}/email`, ctx.all, { email: value }),
        200,
        (b) => b.email,
        async () => (await identityOf(ctx, ctx.base.id)).email,
      ),
    expect(value) {
      const email = canonicalEmailAtExample(value);
      return email === null ? refused('email') : accepted(200, email);
    },
  },
  {
    name: 'GET /v1/identities?username=',
    limits: [['65 characters', 'u'.repeat(65)]],
    run: async (ctx, value) =>
      readBack(
        await ctx.t.call('GET', `/v1/identities?username=${encodeUtf8(value)}`, ctx.all),
        200,
        (b) => b.username,
        async (b) => (await identityOf(ctx, b.id)).username,
      ),
    expect(value, world) {
      const name = canonicalUsername(value.toWellFormed());
      return name !== null && world.registered.has(name)
        ? accepted(200, name)
        : failed(404, 'not_found');
    },
  },
  {
    name: 'POST /v1/authenticate/password username',
    run: async (ctx, value) =>
      outcomeOf(
        await ctx.t.call('POST', '/v1/authenticate/password', ctx.all, {
          username: value,
          password: PASSWORD,
        }),
      ),
    expect: (value, world) => loginExpectation(value, world, 200),
  },
  {
    name: 'POST /v1/authenticate/password password',
    async run(ctx, value) {
      const body = { username: ctx.base.username, password: value };
      return outcomeOf(await ctx.t.call('POST', '/v1/authenticate/password', ctx.all, body));
    },
    expect: () => failed(401, 'invalid_credentials'),
  },
];
