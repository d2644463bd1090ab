import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type App, buildApp } from '../../src/app.js';
import { ERROR_STATUS } from '../../src/http/errors.js';
import { testConfig, testHasher } from '../helpers/app.js';

interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}
interface Document {
  tags: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
}

const ERROR_REF = { $ref: '#/components/schemas/Error' };

/** `/v1/identities/:id` as OpenAPI writes it. */
const openApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}');

/** Every schema object below `node`, with the path to it. */
function* schemasIn(node: unknown, at: string): Generator<[string, Record<string, unknown>]> {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) yield* schemasIn(item, `${at}/${i}`);
    return;
  }
  const object = node as Record<string, unknown>;
  if (object.properties !== undefined) yield [at, object];
  for (const [key, value] of Object.entries(object)) yield* schemasIn(value, `${at}/${key}`);
}

describe('the OpenAPI document', () => {
  let built: App;
  let doc: Document;
  const routes: RouteOptions[] = [];

  beforeAll(async () => {
    built = await buildApp(testConfig(':memory:', {}), {
      hasher: await testHasher(),
      instrument: (app) => app.addHook('onRoute', (route) => void routes.push(route)),
    });
    const res = await built.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    doc = res.json() as Document;
  });
  afterAll(() => built?.close());

  const operations = (): [string, Operation][] =>
    Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]): [string, Operation] => [`${method} ${path}`, op]),
    );

  /** The routes the document describes: not HEAD twins, not hidden. */
  const described = () =>
    routes.filter(
      (route) => route.method !== 'HEAD' && !(route.schema as { hide?: boolean })?.hide,
    );

  it('gives every operation a unique camelCase operationId, a summary and a declared tag', () => {
    const declaredTags = new Set(doc.tags.map((tag) => tag.name));
    const ids = new Set<string>();
    for (const [name, op] of operations()) {
      expect(op.operationId, name).toMatch(/^[a-z][A-Za-z]*$/);
      expect(ids.has(op.operationId!), `${name}: duplicate ${op.operationId}`).toBe(false);
      ids.add(op.operationId!);
      expect(op.summary, name).toMatch(/\S/);
      expect(op.tags?.length, name).toBe(1);
      expect(declaredTags.has(op.tags![0]!), `${name}: tag ${op.tags![0]}`).toBe(true);
    }
    expect(ids.size).toBe(described().length);
  });

  it('requires the bearer token on every service route, and only there', () => {
    const service = described().filter((route) => route.config?.grant !== undefined);
    expect(service.length).toBeGreaterThan(10);
    for (const route of described()) {
      const op = doc.paths[openApiPath(route.url)]?.[String(route.method).toLowerCase()];
      const name = `${route.method} ${route.url}`;
      expect(op, name).toBeDefined();
      if (route.config?.grant) {
        expect(op!.security, name).toEqual([{ serviceToken: [] }]);
      } else {
        // Browser and operational routes: no credentials, the cookie, or an optional token.
        expect(op!.security, name).toBeDefined();
        const tokenRequired =
          op!.security!.length > 0 && op!.security!.every((r) => 'serviceToken' in r);
        expect(tokenRequired, name).toBe(false);
      }
    }
  });

  it('names the shared objects as components, Error with the documented codes', () => {
    const schemas = doc.components.schemas;
    for (const name of ['Identity', 'Session', 'MintedSession', 'Link', 'Flow', 'Error']) {
      expect(schemas[name], name).toBeDefined();
    }
    expect(schemas.Error!.properties!.error).toEqual({
      type: 'string',
      enum: [...Object.keys(ERROR_STATUS), 'bad_request', 'request_timeout', 'internal_error'],
    });
    expect(schemas.Session!.properties!.identity).toEqual({
      $ref: '#/components/schemas/Identity',
    });
  });

  it('references named components instead of inlining copies of them', () => {
    const shapes = new Map(
      Object.entries(doc.components.schemas)
        .filter(([, schema]) => schema.properties !== undefined)
        .map(([name, schema]) => [Object.keys(schema.properties!).sort().join(','), name]),
    );
    for (const [at, schema] of schemasIn(doc.paths, '#/paths')) {
      const shape = Object.keys(schema.properties as object)
        .sort()
        .join(',');
      expect(shapes.get(shape), `${at} is an inline copy`).toBeUndefined();
    }
    for (const [name, op] of operations()) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) < 400 || name.endsWith(' /readyz')) continue;
        expect(response.content?.['application/json']?.schema, `${name} ${status}`).toEqual(
          ERROR_REF,
        );
      }
    }
  });

  it('declares the redirects and hosted pages of the browser routes', () => {
    for (const path of ['/v1/login', '/v1/flows/{id}/password']) {
      const op = Object.values(doc.paths[path]!)[0]!;
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '303', '429']));
      expect(op.responses['303']!.content).toBeUndefined();
      for (const [status, response] of Object.entries(op.responses)) {
        if (status === '303') continue;
        expect(Object.keys(response.content ?? {}), `${path} ${status}`).toEqual([
          'application/json',
          'text/html',
        ]);
      }
    }
    const submit = doc.paths['/v1/flows/{id}/password']!.post!;
    expect(Object.keys(submit.requestBody!.content)).toEqual([
      'application/json',
      'application/x-www-form-urlencoded',
    ]);
  });

  it('declares 500 and the database outage answers on every route that uses the database', () => {
    for (const [name, op] of operations()) {
      expect(Object.keys(op.responses), name).toContain('500');
      if (name.includes(' /v1/') && !name.endsWith('/openapi.json')) {
        expect(Object.keys(op.responses), name).toEqual(expect.arrayContaining(['503', '504']));
      }
    }
  });
});
