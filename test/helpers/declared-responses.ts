import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES } from '../../src/http/schemas.js';

interface DeclaredResponse {
  type?: string;
  content?: Record<string, unknown>;
}

function mediaType(reply: FastifyReply): string | undefined {
  const header = reply.getHeader('content-type');
  return typeof header === 'string' ? header.split(';')[0]!.trim().toLowerCase() : undefined;
}

function text(payload: unknown): string {
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return payload.toString('utf8');
  return '';
}

/** What is wrong with this answer against its route's response map; null when nothing. */
function problemWith(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): string | null {
  const { url, schema } = request.routeOptions;
  const status = reply.statusCode;
  const type = mediaType(reply);
  const body = text(payload);

  if (status >= 400 && type === 'application/json') {
    let code: unknown;
    try {
      code = (JSON.parse(body) as { error?: unknown }).error;
    } catch {
      return `${status} with a body that is not JSON`;
    }
    if (!(ERROR_CODES as readonly unknown[]).includes(code)) {
      return `${status} with error ${JSON.stringify(code)}, not a documented code`;
    }
  }
  // No route matched: the not-found handler, which answers for no declared route.
  if (url === undefined) return null;

  const declared = schema?.response as Record<string, DeclaredResponse> | undefined;
  if (!declared) return `route ${url} declares no responses`;
  const entry = declared[status] ?? declared[`${String(status)[0]}xx`];
  if (!entry) return `status ${status} is not declared (declared: ${Object.keys(declared)})`;
  if (entry.content) {
    if (type === undefined || !(type in entry.content)) {
      return `${status} as ${type}, declared as ${Object.keys(entry.content)}`;
    }
  } else if (entry.type === 'null') {
    if (body !== '') return `${status} has a body but is declared empty`;
  } else if (type !== 'application/json') {
    return `${status} as ${type}, declared as application/json`;
  }
  return null;
}

/**
 * Tests only: records every answer of an app that its route's response map (and so the
 * OpenAPI document) does not declare: the status, the media type, and for a JSON error its
 * code. Installed through `buildApp`'s `instrument` by the shared test app helpers, so every
 * suite checks the declarations with the requests it already makes.
 */
export class DeclaredResponses {
  readonly violations: string[] = [];

  readonly install = (app: FastifyInstance): void => {
    app.addHook('onSend', async (request, reply, payload) => {
      const problem = problemWith(request, reply, payload);
      if (problem) this.violations.push(`${request.method} ${request.url}: ${problem}`);
    });
  };

  /** Throws, listing them, when any answer was undeclared. */
  assertAllDeclared(): void {
    if (this.violations.length === 0) return;
    throw new Error(
      `answers outside the declared responses (OpenAPI):\n  ${this.violations.join('\n  ')}`,
    );
  }
}
