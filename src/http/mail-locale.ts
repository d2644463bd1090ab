import type { FastifyRequest } from 'fastify';

/** The first language of Accept-Language, for the mail; anything odd renders in English. */
export function mailLocaleOf(request: FastifyRequest): string | undefined {
  return request.headers['accept-language']?.split(',')[0]?.split(';')[0]?.trim() || undefined;
}
