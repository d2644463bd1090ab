import type { FastifyReply } from 'fastify';

export interface PagePolicy {
  /** The `'sha256-…'` source of the page's one inline stylesheet. */
  styleHash: string;
  /** Tessera's own scripts (`script-src 'self'`) and their calls back (`connect-src 'self'`). */
  scripts?: boolean;
  /** Where the page's forms may post, and where their redirects may land; `'self'` alone by default. */
  formAction?: string;
}

/**
 * Sends a hosted page (login, account, admin console) with the headers every one of them
 * carries: a CSP allowing nothing but its stylesheet (and, when asked, Tessera's own
 * scripts), no framing, no caching, a same-origin referrer (login-page/respond.ts says why
 * not `no-referrer`), no sniffing.
 */
export function sendHostedPage(
  reply: FastifyReply,
  status: number,
  html: string,
  { styleHash, scripts = false, formAction = "'self'" }: PagePolicy,
): FastifyReply {
  const scriptSources = scripts ? " script-src 'self'; connect-src 'self';" : '';
  return reply
    .code(status)
    .header(
      'content-security-policy',
      `default-src 'none'; style-src ${styleHash};${scriptSources} form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    )
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'same-origin')
    .header('x-content-type-options', 'nosniff')
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(html);
}
