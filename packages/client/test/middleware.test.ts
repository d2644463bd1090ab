import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTesseraClient, type SessionGuardOptions } from '@tessera/client';
import { tesseraSession as expressSession } from '@tessera/client/express';
import { tesseraSession as fastifySession } from '@tessera/client/fastify';
import { withTesseraSession } from '@tessera/client/next';
import { startTessera, type TesseraProcess } from './tessera-process.js';
import { checksummedToken, legacyToken } from './token-fixtures.js';

const PASSWORD = 'correct horse battery staple';
const APP = 'http://app.example';
const HTML = 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8';

interface Answer {
  status: number;
  location: string | null;
  body: unknown;
}

/** One protected endpoint `GET|POST /me` answering the session's username, per framework. */
interface Harness {
  call(options: {
    cookie?: string;
    accept?: string;
    method?: string;
    path?: string;
  }): Promise<Answer>;
  close(): Promise<void>;
}

type Framework = (options: SessionGuardOptions) => Promise<Harness>;

async function bodyOf(res: Response): Promise<unknown> {
  const text = await res.text();
  return res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text;
}

function overHttp(url: string, close: () => Promise<void>): Harness {
  return {
    async call({ cookie, accept, method = 'GET', path = '/me?tab=1' }) {
      const headers: Record<string, string> = {};
      if (cookie) headers.cookie = cookie;
      if (accept) headers.accept = accept;
      const res = await fetch(`${url}${path}`, { method, headers, redirect: 'manual' });
      return { status: res.status, location: res.headers.get('location'), body: await bodyOf(res) };
    },
    close,
  };
}

const FRAMEWORKS: Record<string, Framework> = {
  async express(options) {
    const app = express();
    const answer = (req: express.Request, res: express.Response) =>
      void res.json({ username: req.tessera?.session.identity.username ?? null });
    app.get('/me', expressSession(options), answer);
    app.post('/me', expressSession(options), answer);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return overHttp(url, () => new Promise((resolve) => server.close(() => resolve())));
  },
  async fastify(options) {
    const app = Fastify();
    app.addHook('preHandler', fastifySession(options));
    const answer = async (request: import('fastify').FastifyRequest) => ({
      username: request.tessera?.session.identity.username ?? null,
    });
    app.get('/me', answer);
    app.post('/me', answer);
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    return overHttp(url, () => app.close());
  },
  async next(options) {
    // A Next.js App Router route handler is a function of a Web Request: called as Next calls it.
    const handler = withTesseraSession<{ params: Promise<Record<string, string>> }>(
      options,
      async (_request, _context, session) =>
        Response.json({ username: session?.session.identity.username ?? null }),
    );
    return {
      async call({ cookie, accept, method = 'GET', path = '/me?tab=1' }) {
        const headers: Record<string, string> = {};
        if (cookie) headers.cookie = cookie;
        if (accept) headers.accept = accept;
        const res = await handler(
          new Request(`http://127.0.0.1:3000${path}`, { method, headers }),
          {
            params: Promise.resolve({}),
          },
        );
        return {
          status: res.status,
          location: res.headers.get('location'),
          body: await bodyOf(res),
        };
      },
      close: async () => undefined,
    };
  },
};

describe('session middleware against a real Tessera process', () => {
  let tessera: TesseraProcess;
  let alice: string;
  let disabled: string;
  let revoked: string;

  beforeAll(async () => {
    tessera = await startTessera({ SERVICE_RETURN_TO_ALLOWED: APP });
    const client = createTesseraClient({
      baseUrl: tessera.url,
      serviceToken: tessera.serviceToken,
      acceptLegacyTokens: tessera.legacyTokens,
    });
    const tokens = await Promise.all(
      ['alice', 'mallory', 'trent'].map(
        async (username) =>
          (await client.registerAndAuthenticate({ username, password: PASSWORD })).token,
      ),
    );
    [alice, disabled, revoked] = tokens as [string, string, string];
    await client.revokeSession({ token: revoked });
    await tessera.cli(['identity', 'disable', 'mallory']);
  });
  afterAll(() => tessera?.stop());

  for (const [name, framework] of Object.entries(FRAMEWORKS)) {
    describe(name, () => {
      let verify: Harness;
      let whoami: Harness;
      let optional: Harness;
      let down: Harness;

      beforeAll(async () => {
        const base = { baseUrl: tessera.url, acceptLegacyTokens: tessera.legacyTokens };
        verify = await framework({
          ...base,
          serviceToken: tessera.serviceToken,
          loginRedirect: true,
          appUrl: APP,
        });
        whoami = await framework({ ...base, check: 'whoami' });
        optional = await framework({ ...base, required: false });
        down = await framework({ baseUrl: 'http://127.0.0.1:9', retry: { retries: 0 } });
      });
      afterAll(async () => {
        for (const harness of [verify, whoami, optional, down]) await harness?.close();
      });

      it('puts the session on the request (verify with a service token, or whoami)', async () => {
        for (const harness of [verify, whoami, optional]) {
          expect(await harness.call({ cookie: `other=1; service_session=${alice}` })).toMatchObject(
            {
              status: 200,
              body: { username: 'alice' },
            },
          );
        }
      });

      it('answers 401 without a valid session, 403 for a disabled identity', async () => {
        for (const harness of [verify, whoami]) {
          for (const cookie of [
            undefined,
            'service_session=garbage',
            `service_session=${revoked}`,
          ]) {
            expect(await harness.call({ cookie })).toMatchObject({
              status: 401,
              body: { error: 'invalid_token' },
            });
          }
          expect(await harness.call({ cookie: `service_session=${disabled}` })).toMatchObject({
            status: 403,
            body: { error: 'identity_disabled' },
          });
        }
      });

      it('redirects a browser to the hosted login page with return_to', async () => {
        const answer = await verify.call({ accept: HTML });
        expect(answer.status).toBe(303);
        expect(answer.location).toBe(
          `${tessera.url}/v1/login?return_to=${encodeURIComponent(`${APP}/me?tab=1`)}`,
        );
        // The page Tessera shows there takes that return_to (it is allowed).
        const page = await fetch(answer.location!, { headers: { accept: HTML } });
        expect(page.status).toBe(200);
        // Not a navigation: 401, no redirect.
        expect(await verify.call({ accept: HTML, method: 'POST' })).toMatchObject({ status: 401 });
        // Without loginRedirect: 401.
        expect(await whoami.call({ accept: HTML })).toMatchObject({ status: 401 });
      });

      it('refuses malformed and checksum-failing tokens offline', async () => {
        // `down` points at a closed port: a token it sent on would answer 503.
        for (const token of ['tess_s_x', legacyToken('session'), checksummedToken('flow')]) {
          expect(await down.call({ cookie: `service_session=${token}` })).toMatchObject({
            status: 401,
            body: { error: 'invalid_token' },
          });
        }
        expect(
          await down.call({ cookie: `service_session=${checksummedToken('session')}` }),
        ).toMatchObject({
          status: 503,
          body: { error: 'unavailable' },
        });
      });

      it('lets a request through without a session when not required', async () => {
        expect(await optional.call({})).toMatchObject({ status: 200, body: { username: null } });
        expect(await optional.call({ cookie: `service_session=${revoked}` })).toMatchObject({
          status: 200,
          body: { username: null },
        });
      });
    });
  }
});
