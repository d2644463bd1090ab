import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { PASSWORD, uniqueName } from '../helpers/core.js';
import { errorModelProblem } from '../helpers/error-model.js';
import {
  ALLOWED_RETURN,
  type AppOnDatabase,
  appsOnEveryDatabase,
  encodeUtf8,
  HOSTILE,
  ON_EVERY_DATABASE,
  RAW_PATH_IDS,
} from '../helpers/hostile.js';
import { knownUntilEdgeMerge } from '../helpers/known-until-edge-merge.js';

/**
 * docs/text-input.md, restated here as the oracle the answers are held to (not imported
 * from src/domain/text.ts, so a change to the rule has to change this table too).
 */
const oneLine = (s: string) =>
  s.isWellFormed() && !/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/.test(s);
const opaque = (s: string) => s.isWellFormed() && !s.includes('\u0000');
const codePoints = (s: string) => [...s].length;
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

function canonicalUsername(raw: string): string | null {
  const name = raw.normalize('NFKC').toLowerCase();
  return /^[a-z0-9][a-z0-9._@+-]{2,63}$/.test(name) ? name : null;
}
function displayName(raw: string): string | null {
  const name = raw.trim();
  return oneLine(name) && codePoints(name) >= 1 && codePoints(name) <= 128 ? name : null;
}
function isHttpUrl(raw: string): boolean {
  try {
    return ['http:', 'https:'].includes(new URL(raw).protocol);
  } catch {
    return false;
  }
}
const avatarUrl = (raw: string) => oneLine(raw) && raw.length <= 2048 && isHttpUrl(raw);
function returnTo(raw: string): string | null {
  if (!oneLine(raw) || /[ \\]/.test(raw) || raw.length > 2048 || !isHttpUrl(raw)) return null;
  const url = new URL(raw);
  return url.origin === ALLOWED_RETURN && url.username === '' && url.password === ''
    ? url.href
    : null;
}
const linkKey = (raw: string) => opaque(raw) && bytes(raw) >= 1 && bytes(raw) <= 255;

/** What one request came to, comparable across databases (ids and times left out). */
interface Outcome {
  status: number;
  error?: string;
  message?: string;
  /** The field's value in the answer. */
  echoed?: string;
  /** The field's value read back afterwards. */
  stored?: string;
  page?: true;
}
/** An expected outcome; `field` is the name a validation message must start with. */
type Expected = Omit<Outcome, 'message'> & {
  field?: string;
  /** Only "the same on every database" and the error model are checked. */
  anyError?: true;
  /** Another acceptable outcome. */
  or?: Expected;
};

const refused = (field: string): Expected => ({ status: 422, error: 'validation_error', field });
const failed = (status: number, error: string): Expected => ({ status, error });
const accepted = (status: number, value: string): Expected => ({
  status,
  echoed: value,
  stored: value,
});

/** Usernames (canonical) registered with PASSWORD: the same on every database. */
interface World {
  registered: Set<string>;
}

interface Context extends AppOnDatabase {
  /** An identity with PASSWORD, for sign-ins and profile updates. */
  base: { id: string; username: string };
}

interface Sink {
  name: string;
  /** How a hostile string is put into an otherwise valid value of this field. */
  wrap?: (value: string) => string;
  /** Values at and over the field's limit, sent as they are. */
  limits?: [string, string][];
  run(ctx: Context, value: string): Promise<Outcome>;
  expect(value: string, world: World): Expected;
}

function outcomeOf(res: LightMyRequestResponse): Outcome {
  if (String(res.headers['content-type']).startsWith('text/html')) {
    return { status: res.statusCode, page: true };
  }
  if (res.statusCode === 204 || res.body === '') return { status: res.statusCode };
  const body = res.json() as Record<string, unknown>;
  return typeof body.error === 'string'
    ? { status: res.statusCode, ...(body as { error: string; message?: string }) }
    : { status: res.statusCode };
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The outcome of `res`; on `ok`, with the field's echoed and read-back values. */
async function readBack(
  res: LightMyRequestResponse,
  ok: number,
  echoed: (body: Json) => string,
  stored: (body: Json) => Promise<string>,
): Promise<Outcome> {
  if (res.statusCode !== ok) return outcomeOf(res);
  const body = res.json() as Json;
  return { status: ok, echoed: echoed(body), stored: await stored(body) };
}

async function getJson(ctx: Context, url: string): Promise<Json> {
  const res = await ctx.t.call('GET', url, ctx.all);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Json;
}
const identityOf = (ctx: Context, id: string) => getJson(ctx, `/v1/identities/${id}`);
const linksOf = async (ctx: Context, id: string) =>
  (await getJson(ctx, `/v1/identities/${id}/links`)) as unknown as Json[];

let pairs = 0;
const freshKey = () => `k-${(pairs += 1)}-${Math.random().toString(36).slice(2, 8)}`;

async function newFlow(ctx: Context): Promise<{ id: string; csrf_token: string }> {
  return getJson(ctx, '/v1/login') as Promise<{ id: string; csrf_token: string }>;
}

function loginExpectation(rawUsername: string, world: World, okStatus: number): Expected {
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

function linkKeySinks(): Sink[] {
  return (['provider', 'subject'] as const).flatMap((field): Sink[] => {
    const other = field === 'provider' ? 'subject' : 'provider';
    const limits: [string, string][] = [
      ['255 bytes (85 x "€")', '€'.repeat(85)],
      ['258 bytes (86 x "€")', '€'.repeat(86)],
      ['255 ASCII bytes', 'a'.repeat(255)],
      ['256 ASCII bytes', 'a'.repeat(256)],
    ];
    return [
      {
        name: `POST /v1/authenticate/link ${field}`,
        limits,
        async run(ctx, value) {
          const seed = { username: uniqueName('seed'), display_name: 'Seeded' };
          const res = await ctx.t.call('POST', '/v1/authenticate/link', ctx.all, {
            [field]: value,
            [other]: freshKey(),
            seed,
          });
          return readBack(
            res,
            201,
            () => value,
            async (body) => (await linksOf(ctx, body.session.identity.id))[0]![field],
          );
        },
        expect: (value) => (linkKey(value) ? accepted(201, value) : refused(field)),
      },
      {
        name: `POST /v1/identities/{id}/links ${field}`,
        limits,
        async run(ctx, value) {
          const key = freshKey();
          const body = { [field]: value, [other]: key };
          const res = await ctx.t.call(
            'POST',
            `/v1/identities/${ctx.base.id}/links`,
            ctx.all,
            body,
          );
          return readBack(
            res,
            201,
            (link) => link[field],
            async () => (await linksOf(ctx, ctx.base.id)).find((l) => l[other] === key)![field],
          );
        },
        expect: (value) => (linkKey(value) ? accepted(201, value) : refused(field)),
      },
      {
        name: `DELETE /v1/identities/{id}/links ${field} (not linked)`,
        limits,
        async run(ctx, value) {
          const body = { [field]: value, [other]: freshKey() };
          return outcomeOf(
            await ctx.t.call('DELETE', `/v1/identities/${ctx.base.id}/links`, ctx.all, body),
          );
        },
        expect: (value) => (linkKey(value) ? failed(404, 'not_found') : refused(field)),
      },
    ];
  });
}

const DISPLAY_NAME_LIMITS: [string, string][] = [
  ['128 astral code points', '\u{1d518}'.repeat(128)],
  ['129 astral code points', '\u{1d518}'.repeat(129)],
  ['128 code points of combining marks', `e${'\u0301'.repeat(127)}`],
];
const URL_LIMITS = (origin: string): [string, string][] => [
  ['2048 characters', `${origin}/${'a'.repeat(2047 - origin.length)}`],
  ['2049 characters', `${origin}/${'a'.repeat(2048 - origin.length)}`],
];

const SINKS: Sink[] = [
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
    wrap: (value) => `password-${value}`,
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
  ...linkKeySinks(),
  {
    name: 'POST /v1/authenticate/link seed.username',
    run: async (ctx, value) =>
      readBack(
        await ctx.t.call('POST', '/v1/authenticate/link', ctx.all, {
          provider: 'hostile',
          subject: freshKey(),
          seed: { username: value, display_name: 'Seeded' },
        }),
        201,
        (b) => b.session.identity.username,
        async (b) => (await identityOf(ctx, b.session.identity.id)).username,
      ),
    expect(value, world) {
      const name = canonicalUsername(value);
      if (name === null) return refused('seed.username');
      if (world.registered.has(name)) return failed(409, 'username_taken');
      world.registered.add(name);
      return accepted(201, name);
    },
  },
  {
    name: 'POST /v1/authenticate/link seed.display_name',
    limits: DISPLAY_NAME_LIMITS,
    run: async (ctx, value) =>
      readBack(
        await ctx.t.call('POST', '/v1/authenticate/link', ctx.all, {
          provider: 'hostile',
          subject: freshKey(),
          seed: { username: uniqueName('sd'), display_name: value },
        }),
        201,
        (b) => b.session.identity.display_name,
        async (b) => (await identityOf(ctx, b.session.identity.id)).display_name,
      ),
    expect(value) {
      const name = displayName(value);
      return name === null ? refused('seed.display_name') : accepted(201, name);
    },
  },
  {
    name: 'POST /v1/sessions/verify token',
    run: async (ctx, value) =>
      outcomeOf(await ctx.t.call('POST', '/v1/sessions/verify', ctx.all, { token: value })),
    expect: () => failed(401, 'invalid_token'),
  },
  {
    name: 'POST /v1/sessions/revoke token',
    run: async (ctx, value) =>
      outcomeOf(await ctx.t.call('POST', '/v1/sessions/revoke', ctx.all, { token: value })),
    expect: () => failed(401, 'invalid_token'),
  },
  {
    name: 'POST /v1/sessions/revoke session_id',
    run: async (ctx, value) =>
      outcomeOf(await ctx.t.call('POST', '/v1/sessions/revoke', ctx.all, { session_id: value })),
    expect: () => refused('body.session_id'),
  },
  {
    name: 'GET /v1/login?return_to=',
    wrap: (value) => `${ALLOWED_RETURN}/cb/${value}`,
    limits: URL_LIMITS(ALLOWED_RETURN),
    async run(ctx, value) {
      const url = `/v1/login?return_to=${encodeUtf8(value)}`;
      return readBack(
        await ctx.t.inject({ method: 'GET', url }),
        200,
        (b) => b.return_to,
        async (b) => (await getJson(ctx, `/v1/flows/${b.id}`)).return_to,
      );
    },
    expect(value) {
      const href = returnTo(value.toWellFormed());
      return href === null ? refused('return_to') : accepted(200, href);
    },
  },
  {
    name: 'POST /v1/flows/{id}/password csrf_token',
    async run(ctx, value) {
      const flow = await newFlow(ctx);
      const body = { username: ctx.base.username, password: PASSWORD, csrf_token: value };
      return outcomeOf(await ctx.t.call('POST', `/v1/flows/${flow.id}/password`, null, body));
    },
    expect: () => failed(401, 'invalid_token'),
  },
  ...(['username', 'password'] as const).map((field): Sink => ({
    name: `POST /v1/flows/{id}/password ${field}`,
    async run(ctx, value) {
      const flow = await newFlow(ctx);
      const body = {
        username: ctx.base.username,
        password: PASSWORD,
        csrf_token: flow.csrf_token,
        [field]: value,
      };
      return outcomeOf(await ctx.t.call('POST', `/v1/flows/${flow.id}/password`, null, body));
    },
    expect: (value, world) =>
      field === 'username'
        ? loginExpectation(value, world, 200)
        : failed(401, 'invalid_credentials'),
  })),
  {
    name: 'POST /v1/flows/{id}/password username, as an HTML form',
    async run(ctx, value) {
      const flow = await newFlow(ctx);
      const fields = { username: value, password: PASSWORD, csrf_token: flow.csrf_token };
      const res = await ctx.t.inject({
        method: 'POST',
        url: `/v1/flows/${flow.id}/password`,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
        payload: new URLSearchParams(fields).toString(),
      });
      return outcomeOf(res);
    },
    expect: (value, world) => ({
      ...loginExpectation(value.toWellFormed(), world, 200),
      error: undefined,
      page: true,
    }),
  },
];

/** Every route with an id in its path, given an otherwise valid request. */
const PATH_ROUTES: [string, string, unknown?, 'form'?][] = [
  ['GET', '/v1/identities/{id}'],
  ['PATCH', '/v1/identities/{id}/profile', { display_name: 'Valid' }],
  ['PATCH', '/v1/identities/{id}', { display_name: 'Valid' }],
  ['POST', '/v1/identities/{id}/revoke-sessions'],
  ['GET', '/v1/identities/{id}/links'],
  ['POST', '/v1/identities/{id}/links', { provider: 'p', subject: 's' }],
  ['DELETE', '/v1/identities/{id}/links', { provider: 'p', subject: 's' }],
  ['GET', '/v1/flows/{id}'],
  ['POST', '/v1/flows/{id}/password', { username: 'someone', password: PASSWORD }],
  ['POST', '/v1/flows/{id}/password', 'username=someone&password=x', 'form'],
];

/** The answers of every database must agree, and match `expected`. */
function compare(label: string, outcomes: Outcome[], expected: Expected, problems: string[]): void {
  const [first] = outcomes;
  if (outcomes.some((o) => JSON.stringify(o) !== JSON.stringify(first))) {
    problems.push(`${label}: databases disagree: ${JSON.stringify(outcomes)}`);
    return;
  }
  const { message, ...got } = first!;
  const { field, anyError, or, ...want } = expected;
  if (anyError) return;
  // Drops the keys an expectation leaves undefined.
  const clean = (o: object) => JSON.stringify(JSON.parse(JSON.stringify(o)));
  if (clean(got) !== clean(want) && (or === undefined || clean(got) !== clean(or))) {
    problems.push(`${label}: got ${JSON.stringify(first)}, want ${JSON.stringify(expected)}`);
  } else if (field !== undefined && !message?.startsWith(`${field} `)) {
    problems.push(`${label}: message ${JSON.stringify(message)} does not name ${field}`);
  }
}

describe(`hostile strings in every text field and path id ${ON_EVERY_DATABASE}`, () => {
  const apps = appsOnEveryDatabase();
  const world: World = { registered: new Set() };
  const contexts = new Map<AppOnDatabase, Context>();
  const contextOf = async (app: AppOnDatabase): Promise<Context> => {
    let ctx = contexts.get(app);
    if (!ctx) {
      const username = 'hostile-base';
      const res = await app.t.call('POST', '/v1/register', app.all, {
        username,
        password: PASSWORD,
      });
      expect(res.statusCode, res.body).toBe(201);
      ctx = { ...app, base: { id: res.json().id as string, username } };
      contexts.set(app, ctx);
      world.registered.add(username);
    }
    return ctx;
  };

  it.each(SINKS.map((sink) => [sink.name, sink] as const))('%s', async (_name, sink) => {
    const problems: string[] = [];
    const cases: [string, string][] = [
      ...HOSTILE.map(([label, value]): [string, string] => [label, sink.wrap?.(value) ?? value]),
      ...(sink.limits ?? []),
    ];
    for (const [label, value] of cases) {
      const outcomes: Outcome[] = [];
      for (const app of apps) outcomes.push(await sink.run(await contextOf(app), value));
      compare(label, outcomes, sink.expect(value, world), problems);
    }
    expect(problems).toEqual([]);
  });

  const ids: [string, string][] = [
    ...HOSTILE.map(([label, value]): [string, string] => [label, encodeUtf8(value)]),
    ...RAW_PATH_IDS,
  ];
  it.each(
    PATH_ROUTES.map(
      (route) => [`${route[0]} ${route[1]}${route[3] ? ' (form)' : ''}`, route] as const,
    ),
  )(
    '%s: every hostile id is 404 not_found, and never reaches the database as garbage',
    async (_name, [method, template, body, form]) => {
      const problems: string[] = [];
      for (const [label, id] of ids) {
        const url = template.replace('{id}', id);
        const answers: LightMyRequestResponse[] = [];
        for (const app of apps) {
          answers.push(
            await app.t.inject({
              method: method as 'GET',
              url,
              headers: {
                authorization: `Bearer ${app.all}`,
                ...(form
                  ? { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' }
                  : {}),
              },
              ...(body === undefined ? {} : { payload: body as string }),
            }),
          );
        }
        const where = `${label} (${url.slice(0, 80)})`;
        compare(where, answers.map(outcomeOf), pathExpectation(id, form !== undefined), problems);
        for (const res of answers) {
          if (knownUntilEdgeMerge(url, res)) continue;
          const problem = errorModelProblem(res, { pageAllowed: form !== undefined });
          if (problem) problems.push(`${where}: ${problem}`);
        }
      }
      expect(problems).toEqual([]);
    },
  );
});

/**
 * A decodable id of at most 100 characters names no identity or flow: 404 not_found. Ids the router itself refuses (bad
 * encoding, too long) need only be inside the error model and the same everywhere.
 */
function pathExpectation(id: string, form: boolean): Expected {
  let decoded: string;
  try {
    decoded = decodeURIComponent(id);
  } catch {
    return { status: 0, anyError: true };
  }
  if (decoded.length > 100) return { status: 0, anyError: true };
  // A form post gets the hosted page, unless the path (`//`, `/../`) matches no route at all.
  return form
    ? { status: 404, page: true, or: failed(404, 'not_found') }
    : failed(404, 'not_found');
}
