import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { PASSWORD } from '../helpers/core.js';
import { errorModelProblem } from '../helpers/error-model.js';
import {
  type FuzzRequest,
  generateRequest,
  mayAnswerWithPage,
  mustAnswerWithPage,
  type Placeholders,
  resolve,
} from '../helpers/fuzz.js';
import { appsOnEveryDatabase, GENEROUS_ENV, ON_EVERY_DATABASE } from '../helpers/hostile.js';
import { Rng } from '../helpers/rng.js';

/**
 * A bounded, seeded fuzz pass over every route: the same generated requests go to SQLite
 * and PostgreSQL, and every answer must lie inside the error model (or be a documented
 * success, or the hosted page on the browser form routes), the same on both databases.
 * Reproduce a failure with the seed it prints: TESSERA_FUZZ_SEED=<seed>.
 */
const SEED = Number(process.env.TESSERA_FUZZ_SEED ?? 0x7e55e7a);
const REQUESTS = Number(process.env.TESSERA_FUZZ_REQUESTS ?? 1000);

/** What must agree across databases: ids, times and tokens in successes may differ. */
function fingerprint(res: LightMyRequestResponse): string {
  const type = String(res.headers['content-type'] ?? '').split(';')[0];
  const error = res.statusCode >= 400 && type === 'application/json' ? res.body : '';
  return `${res.statusCode} ${type} ${error}`;
}

const isPage = (res: LightMyRequestResponse) =>
  String(res.headers['content-type']).startsWith('text/html');

function describeRequest(index: number, request: FuzzRequest): string {
  const body =
    request.body === undefined
      ? ''
      : ` body=${JSON.stringify(request.body.toString().slice(0, 120))}`;
  return `#${index} ${request.method} ${request.url.slice(0, 160)} headers=${JSON.stringify(request.headers).slice(0, 300)}${body}`;
}

describe(`fuzz: ${REQUESTS} seeded requests over every route ${ON_EVERY_DATABASE}`, () => {
  const apps = appsOnEveryDatabase({
    ...GENEROUS_ENV,
    SERVICE_SESSION_CORS_ORIGINS: 'https://app.example',
  });

  async function placeholdersOf(app: (typeof apps)[number]): Promise<Placeholders> {
    const registered = await app.t.call('POST', '/v1/register-and-authenticate', app.all, {
      username: 'fuzz-base',
      password: PASSWORD,
    });
    expect(registered.statusCode, registered.body).toBe(201);
    const { session, token } = registered.json() as {
      session: { identity: { id: string } };
      token: string;
    };
    const flow = (await app.t.inject({ method: 'GET', url: '/v1/login' })).json() as {
      id: string;
      csrf_token: string;
    };
    return {
      all: app.all,
      weak: await app.t.token('introspect'),
      session: token,
      identity: session.identity.id,
      flow: flow.id,
      csrf: flow.csrf_token,
    };
  }

  it(`every answer is inside the error model and the same on both databases (seed ${SEED})`, async () => {
    const values = await Promise.all(apps.map(placeholdersOf));
    const rng = new Rng(SEED);
    const failures: string[] = [];
    const statuses = new Map<number, number>();
    let pages = 0;
    for (let index = 0; index < REQUESTS && failures.length < 20; index += 1) {
      const request = generateRequest(rng);
      const answers: LightMyRequestResponse[] = [];
      for (const [k, app] of apps.entries()) {
        const sent = resolve(request, values[k]!);
        answers.push(
          await app.t.inject({
            method: sent.method as 'GET',
            url: sent.url,
            headers: sent.headers,
            ...(sent.body === undefined ? {} : { payload: sent.body }),
          }),
        );
      }
      const where = describeRequest(index, request);
      const prints = answers.map(fingerprint);
      if (prints.some((print) => print !== prints[0])) {
        failures.push(`${where}\n  databases disagree: ${JSON.stringify(prints)}`);
        continue;
      }
      const [res] = answers;
      statuses.set(res!.statusCode, (statuses.get(res!.statusCode) ?? 0) + 1);
      const problem = errorModelProblem(res!, {
        pageAllowed: mayAnswerWithPage(request.method, request.url),
        head: request.method === 'HEAD',
      });
      if (problem) failures.push(`${where}\n  ${problem}`);
      else if (mustAnswerWithPage(request)) {
        pages += 1;
        if (!isPage(res!)) failures.push(`${where}\n  a form post answered ${fingerprint(res!)}`);
      }
    }
    const sorted = [...statuses].sort(([a], [b]) => a - b);
    console.info(
      `fuzz seed ${SEED}: statuses ${JSON.stringify(sorted)}; form posts held to the page: ${pages}`,
    );
    expect(failures, `fuzz seed ${SEED} (rerun with TESSERA_FUZZ_SEED=${SEED})`).toEqual([]);
  }, 600_000);
});
