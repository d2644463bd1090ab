import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/app.js';
import { NoContent, responses } from '../../src/http/schemas.js';
import { testConfig, testHasher } from '../helpers/app.js';
import { DeclaredResponses } from '../helpers/declared-responses.js';

/**
 * The check every shared test app runs (test/helpers/declared-responses.ts), shown failing
 * on routes that answer outside their declarations. The real routes are checked by every
 * other suite through the shared helpers.
 */
describe('the declared-responses check', () => {
  let built: App;
  let check: DeclaredResponses;

  beforeAll(async () => {
    check = new DeclaredResponses();
    const config = testConfig(':memory:', {});
    built = await buildApp(config, {
      hasher: await testHasher(),
      instrument: (app) => {
        check.install(app);
        const schema = {
          hide: true,
          response: responses({ 200: Type.Object({ ok: Type.Boolean() }) }, [404]),
        };
        app.get('/test/declared', { schema }, async () => ({ ok: true }));
        app.get('/test/teapot', { schema }, async (_request, reply) => reply.code(418).send());
        app.get('/test/html', { schema }, async (_request, reply) =>
          reply.type('text/html').send('<p>hi</p>'),
        );
        app.get('/test/code', { schema }, async (_request, reply) =>
          reply.code(404).send({ error: 'no_such_code' }),
        );
        app.get(
          '/test/empty',
          { schema: { hide: true, response: { 204: NoContent('nothing') } } },
          async (_request, reply) => reply.code(204).send(),
        );
        app.get('/test/undeclared', { schema: { hide: true } }, async () => ({ ok: true }));
      },
    });
  });
  afterAll(() => built?.close());

  async function violationsOf(url: string): Promise<string[]> {
    const before = check.violations.length;
    await built.app.inject({ method: 'GET', url });
    return check.violations.slice(before);
  }

  it('passes declared answers', async () => {
    expect(await violationsOf('/test/declared')).toEqual([]);
    expect(await violationsOf('/test/empty')).toEqual([]);
    // The not-found handler answers for no route; its error code is still checked.
    expect(await violationsOf('/test/nothing-here')).toEqual([]);
  });

  it('records a status the route does not declare', async () => {
    expect(await violationsOf('/test/teapot')).toEqual([
      'GET /test/teapot: status 418 is not declared (declared: 200,404,500)',
    ]);
  });

  it('records a media type the status does not declare', async () => {
    expect(await violationsOf('/test/html')).toEqual([
      'GET /test/html: 200 as text/html, declared as application/json',
    ]);
  });

  it('records an error code outside the error model', async () => {
    expect(await violationsOf('/test/code')).toEqual([
      'GET /test/code: 404 with error "no_such_code", not a documented code',
    ]);
  });

  it('records a route with no response map', async () => {
    expect(await violationsOf('/test/undeclared')).toEqual([
      'GET /test/undeclared: route /test/undeclared declares no responses',
    ]);
  });

  it('fails loudly, naming every undeclared answer', () => {
    expect(() => check.assertAllDeclared()).toThrow(/418 is not declared[\s\S]*no_such_code/);
  });
});
