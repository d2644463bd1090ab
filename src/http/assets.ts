import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ACCOUNT_PASSKEYS_JS } from './assets/account-passkeys.js';
import { PASSKEY_LOGIN_JS } from './assets/passkey-login.js';
import { REGISTRATION_PASSKEY_JS } from './assets/registration-passkey.js';
import { responses } from './schemas.js';

/**
 * Scripts the hosted pages load, served by Tessera itself (the pages' CSP allows no other
 * origin's script): @simplewebauthn/browser's bundle, read once from the installed package,
 * and the pages' own scripts. Their URLs carry a hash of the content, so they can be cached
 * for a year and a new release is fetched anew.
 */
interface Asset {
  name: string;
  body: string;
  url: string;
}

function bundle(): string {
  const require = createRequire(import.meta.url);
  // The package's export map names only its entry points; its directory holds the bundle.
  let dir = dirname(require.resolve('@simplewebauthn/browser'));
  for (let up = 0; up < 4; up += 1) {
    const file = join(dir, 'dist', 'bundle', 'index.umd.min.js');
    if (existsSync(file)) return readFileSync(file, 'utf8');
    dir = dirname(dir);
  }
  throw new Error('@simplewebauthn/browser: dist/bundle/index.umd.min.js not found');
}

function asset(name: string, body: string): Asset {
  const version = createHash('sha256').update(body).digest('base64url').slice(0, 12);
  return { name, body, url: `/v1/assets/${name}?v=${version}` };
}

const ASSETS = [
  asset('webauthn.js', bundle()),
  asset('passkey-login.js', PASSKEY_LOGIN_JS),
  asset('account-passkeys.js', ACCOUNT_PASSKEYS_JS),
  asset('registration-passkey.js', REGISTRATION_PASSKEY_JS),
];
const byName = new Map(ASSETS.map((item) => [item.name, item]));

export const LOGIN_SCRIPTS = [byName.get('webauthn.js')!.url, byName.get('passkey-login.js')!.url];
export const ACCOUNT_SCRIPTS = [
  byName.get('webauthn.js')!.url,
  byName.get('account-passkeys.js')!.url,
];
export const REGISTRATION_SCRIPTS = [
  byName.get('webauthn.js')!.url,
  byName.get('registration-passkey.js')!.url,
];

const Script = Type.Unsafe({
  description: 'JavaScript',
  content: { 'text/javascript': { schema: { type: 'string' } } },
});

export function assetRoutes(app: FastifyInstance): void {
  for (const item of ASSETS) {
    app.get(
      `/v1/assets/${item.name}`,
      {
        schema: {
          // Static files of the hosted pages, not API operations: declared, not documented
          // (like the CORS preflights).
          hide: true,
          operationId: `asset${item.name
            .replace(/\.js$/, '')
            .split('-')
            .map((word) => word[0]!.toUpperCase() + word.slice(1))
            .join('')}`,
          summary: `The hosted pages' script ${item.name}`,
          tags: ['browser'],
          description:
            'Served by Tessera itself for its hosted pages (no CDN). Cached for a year: the pages refer to it with a version in the query.',
          security: [{}],
          // No database behind it, but a draining server answers 503 like any route.
          response: responses({ 200: Script }, [503, 504]),
        },
      },
      (_request, reply) =>
        reply
          .header('content-type', 'text/javascript; charset=utf-8')
          .header('cache-control', 'public, max-age=31536000, immutable')
          .header('cross-origin-resource-policy', 'same-origin')
          .send(item.body),
    );
  }
}
