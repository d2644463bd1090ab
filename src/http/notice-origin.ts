import type { FastifyRequest } from 'fastify';
import type { NoticeOrigin } from '../domain/notices/notices.js';

/**
 * The user's own browser, as a security notice describes it: the address the account pages
 * already audit (`request.ip`), the User-Agent, and the first language of Accept-Language
 * (a malformed one renders in English, mail/message.ts).
 */
export function noticeOrigin(request: FastifyRequest): NoticeOrigin {
  const language = request.headers['accept-language']?.split(',')[0]?.split(';')[0]?.trim();
  return {
    address: request.ip || null,
    userAgent: request.headers['user-agent'] || null,
    locale: language && language !== '*' ? language : null,
  };
}
