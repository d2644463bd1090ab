import { PASSWORD, uniqueName } from './core.js';
import { ALLOWED_RETURN, encodeUtf8 } from './hostile.js';
import {
  DISPLAY_NAME_LIMITS,
  freshKey,
  getJson,
  identityOf,
  linksOf,
  loginExpectation,
  newFlow,
  type Sink,
  URL_LIMITS,
} from './hostile-sinks.js';
import {
  accepted,
  canonicalUsername,
  displayName,
  failed,
  linkKey,
  outcomeOf,
  readBack,
  refused,
  returnTo,
} from './text-oracle.js';

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

/** Links, sessions and login flows. */
export const LINK_SESSION_FLOW_SINKS: Sink[] = [
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
