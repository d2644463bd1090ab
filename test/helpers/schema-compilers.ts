import { AjvCompiler } from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { ServerOptions } from '../../src/http/server.js';

/**
 * Fastify's own compilers (the packages and versions Fastify itself uses), shared by every
 * server a test worker builds: each builds the same routes from the same schema objects, and
 * compiling them again took about 150 ms of every test app's start. Fastify makes one Ajv
 * per server; `AjvCompiler()` pools one per set of options, and Ajv caches what it compiled
 * by schema object. Response serializers are cached here the same way.
 *
 * One difference, checked rather than assumed: with a compiler of its own Fastify no longer
 * lowercases the property names of a `headers` schema (header names are case-insensitive).
 * Every such schema of ours is lowercase already; one that is not would validate otherwise
 * in tests than in the service, so it fails loudly here.
 */
type Factory = NonNullable<ServerOptions['compilersFactory']>;
type SerializerFactory = NonNullable<Factory['buildSerializer']>;
/** What Fastify calls a validator compiler with (its types name the schema only). */
type CompileValidator = (route: { schema: unknown; url: string; httpPart?: string }) => unknown;

const validators = AjvCompiler() as unknown as (
  externalSchemas: unknown,
  options: unknown,
) => CompileValidator;
const buildValidator = ((externalSchemas: unknown, options: unknown) => {
  const compile = validators(externalSchemas, options);
  return (route: Parameters<CompileValidator>[0]) => {
    if (route.httpPart === 'headers') assertLowercase(route.schema, route.url);
    return compile(route);
  };
}) as Factory['buildValidator'];

const serializers = SerializerSelector();
const compiled = new WeakMap<object, Map<string, unknown>>();
const buildSerializer: SerializerFactory = (externalSchemas, options) => {
  const compile = serializers(externalSchemas, options);
  // Keyed by the options too: they are part of what was compiled.
  const key = JSON.stringify([externalSchemas, options]);
  return (route) => {
    const schema = route.schema as object;
    let byOptions = compiled.get(schema);
    if (!byOptions) compiled.set(schema, (byOptions = new Map()));
    let serialize = byOptions.get(key);
    if (!serialize) byOptions.set(key, (serialize = compile(route)));
    return serialize as ReturnType<typeof compile>;
  };
};

function assertLowercase(schema: unknown, url: string): void {
  const properties = (schema as { properties?: Record<string, unknown> }).properties ?? {};
  const named = Object.keys(properties).find((name) => name !== name.toLowerCase());
  if (named) throw new Error(`${url}: headers schema names ${named}; write header names lowercase`);
}

export const sharedCompilers: Factory = { buildValidator, buildSerializer };
