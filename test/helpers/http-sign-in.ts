import { expect } from 'vitest';
import type { SoftAuthenticator } from './soft-authenticator.js';

/**
 * Sign-ins and credential enrolment as a client does them, over real HTTP (fetch) against
 * a listening Tessera, whatever runs it: an in-process app or `tessera serve`. The same
 * calls on two deployments show they treat a user alike (test/import/db-copy.test.ts).
 */
export interface Answer {
  status: number;
  body: string;
  json<T = Record<string, unknown>>(): T;
  /** A cookie the answer set, or undefined. */
  cookie(name: string): string | undefined;
}

export interface StartedFlow {
  id: string;
  csrf_token: string;
}

export function httpClient(origin: string) {
  async function request(
    method: string,
    path: string,
    options: { body?: unknown; session?: string; csrf?: string; accept?: string } = {},
  ): Promise<Answer> {
    const response = await fetch(new URL(path, origin), {
      method,
      redirect: 'manual',
      headers: {
        accept: options.accept ?? 'application/json',
        origin,
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(options.session ? { cookie: `service_session=${options.session}` } : {}),
        ...(options.csrf ? { 'x-csrf-token': options.csrf } : {}),
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    const body = await response.text();
    const cookies = new Map(
      response.headers.getSetCookie().map((line) => {
        const pair = line.split(';')[0]!;
        const at = pair.indexOf('=');
        return [pair.slice(0, at).trim(), pair.slice(at + 1).trim()] as const;
      }),
    );
    return {
      status: response.status,
      body,
      json: <T>() => JSON.parse(body) as T,
      cookie: (name) => cookies.get(name) || undefined,
    };
  }

  const sessionOf = (answer: Answer): string => {
    expect(answer.status, answer.body).toBe(200);
    const session = answer.cookie('service_session');
    expect(session, answer.body).toBeDefined();
    return session!;
  };

  async function startFlow(): Promise<StartedFlow> {
    const answer = await request('GET', '/v1/login');
    expect(answer.status, answer.body).toBe(200);
    return answer.json<StartedFlow>();
  }

  async function twoFactorCsrf(session: string): Promise<string> {
    const answer = await request('GET', '/v1/account/two-factor', { session });
    expect(answer.status, answer.body).toBe(200);
    return answer.json<{ csrf_token: string }>().csrf_token;
  }

  async function passkeysCsrf(session: string): Promise<string> {
    const page = await request('GET', '/v1/account/passkeys', { session, accept: 'text/html' });
    expect(page.status, page.body).toBe(200);
    return /data-csrf="([^"]+)"/.exec(page.body)![1]!;
  }

  return {
    request,
    sessionOf,
    startFlow,
    /** A flow's password step: a session, or a flow waiting for its second factor. */
    async password(username: string, password: string) {
      const flow = await startFlow();
      const answer = await request('POST', `/v1/flows/${flow.id}/password`, {
        body: { username, password, csrf_token: flow.csrf_token },
      });
      return { flow, answer };
    },
    secondFactor(flow: StartedFlow, method: 'totp' | 'recovery_code', value: string) {
      const field = method === 'totp' ? 'code' : 'recovery_code';
      return request('POST', `/v1/flows/${flow.id}/${method}`, {
        body: { [field]: value, csrf_token: flow.csrf_token },
      });
    },
    async passkey(authenticator: SoftAuthenticator): Promise<Answer> {
      const flow = await startFlow();
      const options = await request('POST', `/v1/flows/${flow.id}/passkey/options`, {
        body: { csrf_token: flow.csrf_token },
      });
      expect(options.status, options.body).toBe(200);
      const credential = authenticator.assert(
        options.json<{ options: Record<string, unknown> }>().options,
        {
          origin,
        },
      );
      return request('POST', `/v1/flows/${flow.id}/passkey`, {
        body: { csrf_token: flow.csrf_token, credential },
      });
    },
    /** Starts TOTP enrolment: the secret, to be confirmed with a code (`confirmTotp`). */
    async startTotp(session: string): Promise<string> {
      const csrf = await twoFactorCsrf(session);
      const answer = await request('POST', '/v1/account/two-factor/totp', {
        session,
        csrf,
        body: {},
      });
      expect(answer.status, answer.body).toBe(200);
      return answer.json<{ secret: string }>().secret;
    },
    /** The recovery codes the confirmation answers. */
    async confirmTotp(session: string, code: string): Promise<string[]> {
      const csrf = await twoFactorCsrf(session);
      const answer = await request('POST', '/v1/account/two-factor/totp/confirm', {
        session,
        csrf,
        body: { code },
      });
      expect(answer.status, answer.body).toBe(200);
      return answer.json<{ recovery_codes: string[] }>().recovery_codes;
    },
    async registerPasskey(session: string, authenticator: SoftAuthenticator): Promise<void> {
      const csrf = await passkeysCsrf(session);
      const options = await request('POST', '/v1/account/passkeys/options', {
        session,
        csrf,
        body: {},
      });
      expect(options.status, options.body).toBe(200);
      const credential = authenticator.register(
        options.json<{ options: Record<string, unknown> }>().options,
        { origin },
      );
      const created = await request('POST', '/v1/account/passkeys', {
        session,
        csrf,
        body: { credential },
      });
      expect(created.status, created.body).toBe(201);
    },
    /** `<username> <aal>` of the session, or the status when it is refused. */
    async whoami(session: string): Promise<string | number> {
      const answer = await request('GET', '/v1/whoami', { session });
      if (answer.status !== 200) return answer.status;
      const { identity, aal } = answer.json<{ identity: { username: string }; aal: string }>();
      return `${identity.username} ${aal}`;
    },
  };
}

export type HttpClient = ReturnType<typeof httpClient>;
