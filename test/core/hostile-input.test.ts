import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/core.js';
import { errorModelProblem } from '../helpers/error-model.js';
import {
  type AppOnDatabase,
  appsOnEveryDatabase,
  encodeUtf8,
  HOSTILE,
  ON_EVERY_DATABASE,
  RAW_PATH_IDS,
} from '../helpers/hostile.js';
import { type Context, IDENTITY_SINKS } from '../helpers/hostile-sinks.js';
import { LINK_SESSION_FLOW_SINKS } from '../helpers/hostile-sinks-links-flows.js';
import {
  compare,
  type Expected,
  failed,
  type Outcome,
  outcomeOf,
  type World,
} from '../helpers/text-oracle.js';

/**
 * One table of hostile strings (test/helpers/hostile.ts) through every text field and
 * every path id, on SQLite and PostgreSQL side by side: never a 500, the same answer on
 * both, and what is accepted is answered and read back exactly as docs/text-input.md says.
 */
const SINKS = [...IDENTITY_SINKS, ...LINK_SESSION_FLOW_SINKS];

/** Each test sends a fixed number of requests; on a loaded machine that takes a while. */
const SLOW_BUT_BOUNDED = 180_000;

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

  it.each(SINKS.map((sink) => [sink.name, sink] as const))(
    '%s',
    async (_name, sink) => {
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
    },
    SLOW_BUT_BOUNDED,
  );

  // Refusals are audited with the raw input (the attempted username, say): those rows
  // must reach both databases too, not fail in a background flush on one of them.
  it('leaves the same audit rows on every database', async () => {
    const counts: Record<string, number>[] = [];
    for (const app of apps) {
      await app.t.deps.audit.flush();
      const byAction: Record<string, number> = {};
      for (const row of await app.t.deps.store.listAuditRecords(1_000_000)) {
        const key = `${row.action} ${row.outcome}`;
        byAction[key] = (byAction[key] ?? 0) + 1;
      }
      counts.push(byAction);
    }
    for (const other of counts.slice(1)) expect(other).toEqual(counts[0]);
    expect(Object.keys(counts[0]!).length).toBeGreaterThan(10);
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
          const problem = errorModelProblem(res, { pageAllowed: form !== undefined });
          if (problem) problems.push(`${where}: ${problem}`);
        }
      }
      expect(problems).toEqual([]);
    },
    SLOW_BUT_BOUNDED,
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
