/**
 * The load generator, run as its own process (`node --import tsx bench/load-process.ts <spec>`)
 * so that it never shares an event loop with the orchestrator or the measured server. It
 * drives autocannon's API, rotates over many real tokens / ids, records every response's
 * latency itself (float milliseconds) and prints one JSON result line.
 */
import { readFileSync } from 'node:fs';
import autocannon, { type RequestStep, type Result } from 'autocannon';

export type ScenarioName =
  'whoami' | 'verify' | 'identity' | 'login' | 'password' | 'link' | 'signup' | OidcScenario;
export type OidcScenario = 'oidc-code' | 'oidc-refresh' | 'oidc-userinfo';

/** What one OIDC round presents to one server (its own client, codes and tokens). */
export interface OidcLoadData {
  tokenPath: string;
  userinfoPath: string;
  /** `Basic base64(client_id:client_secret)`. */
  basic: string;
  redirectUri: string;
  /** Unredeemed codes with their PKCE verifiers; a code round redeems each once. */
  codes: { code: string; verifier: string }[];
  /** One refresh chain's first token per connection. */
  refreshTokens: string[];
  accessTokens: string[];
}

export interface LoadData {
  /** Raw session tokens that are valid in the database under test. */
  tokens: string[];
  identityIds: string[];
  usernames: string[];
  password: string;
  serviceToken: string;
  linkSubjects: { subject: string; username: string }[];
  oidc?: OidcLoadData;
}

export interface LoadSpec {
  url: string;
  scenario: ScenarioName;
  connections: number;
  durationSec: number;
  /** Stop after this many requests instead of after `durationSec` (warm-up passes). */
  amount?: number;
  dataFile: string;
}

export interface LoadResult {
  /** Operations of the scenario completed with the expected status (logins for `login`). */
  ops: number;
  opsPerSec: number;
  /** All HTTP responses (a login is two). */
  responses: number;
  durationSec: number;
  /** Latency of the measured request (the password POST for `login`), milliseconds. */
  p50: number;
  p99: number;
  mean: number;
  unexpected: Record<string, number>;
  errors: number;
  timeouts: number;
  /** CPU seconds the measured server used during the round (filled in by the orchestrator). */
  serverCpuSeconds?: number;
  /** Of which the server's main thread (orchestrator; absent for the argon2 bound). */
  mainThreadCpuSeconds?: number;
  /** Share of the machine's CPU time the hypervisor stole during the round (orchestrator). */
  stealShare?: number;
  /** CPU seconds of the PostgreSQL backends serving the measured server (OIDC rounds). */
  databaseCpuSeconds?: number;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)]!;
}

function rotate<T>(items: T[]): () => T {
  if (items.length === 0) throw new Error('no fixture data for this scenario');
  let next = 0;
  return () => {
    const item = items[next]!;
    next = (next + 1) % items.length;
    return item;
  };
}

interface Plan {
  requests: RequestStep[];
  /** Status the measured request must answer with. */
  expected: number;
}

function plan(scenario: ScenarioName, data: LoadData): Plan & { measured: () => boolean } {
  const bearer = `Bearer ${data.serviceToken}`;
  // Marks which step of a sequence the next 'response' event belongs to.
  let lastStepMeasured = true;
  const measured = () => lastStepMeasured;
  /** One POST with the service token and a JSON body made per request, answered 200. */
  const bearerPost = (path: string, body: () => unknown) => ({
    expected: 200,
    measured,
    requests: [
      {
        method: 'POST' as const,
        path,
        setupRequest: (request: RequestStep) => ({
          ...request,
          headers: { authorization: bearer, 'content-type': 'application/json' },
          body: JSON.stringify(body()),
        }),
      },
    ],
  });
  /**
   * A browser flow's two requests, answered `expected`: the flow's start (`GET start`, its
   * id and CSRF token kept on the connection), then its POST with `body()` and the token.
   * Only the POST is measured (its latency; the rate counts completed pairs).
   */
  const flowThenPost = (
    start: string,
    submit: (flowId: string) => string,
    expected: number,
    body: () => Record<string, unknown>,
  ): Plan & { measured: () => boolean } => ({
    expected,
    measured,
    requests: [
      {
        method: 'GET',
        path: start,
        headers: { accept: 'application/json' },
        onResponse: (status, text, context) => {
          lastStepMeasured = false;
          if (status === 200) context.flow = JSON.parse(text) as unknown;
        },
      },
      {
        method: 'POST',
        setupRequest: (request, context) => {
          const flow = context.flow as { id: string; csrf_token: string } | undefined;
          if (!flow) return null;
          return {
            ...request,
            path: submit(flow.id),
            headers: { 'content-type': 'application/json', accept: 'application/json' },
            body: JSON.stringify({ ...body(), csrf_token: flow.csrf_token }),
          };
        },
        onResponse: () => {
          lastStepMeasured = true;
        },
      },
    ],
  });
  switch (scenario) {
    case 'whoami': {
      const token = rotate(data.tokens);
      return {
        expected: 200,
        measured,
        requests: [
          {
            method: 'GET',
            path: '/v1/whoami',
            setupRequest: (request) => ({
              ...request,
              headers: { cookie: `service_session=${token()}` },
            }),
          },
        ],
      };
    }
    case 'verify': {
      const token = rotate(data.tokens);
      return bearerPost('/v1/sessions/verify', () => ({ token: token() }));
    }
    case 'identity': {
      const id = rotate(data.identityIds);
      return {
        expected: 200,
        measured,
        requests: [
          {
            method: 'GET',
            setupRequest: (request) => ({
              ...request,
              path: `/v1/identities/${id()}`,
              headers: { authorization: bearer },
            }),
          },
        ],
      };
    }
    case 'link': {
      const subject = rotate(data.linkSubjects);
      return bearerPost('/v1/authenticate/link', () => {
        const next = subject();
        return {
          provider: 'bench',
          subject: next.subject,
          seed: { username: next.username, display_name: next.username },
        };
      });
    }
    case 'login': {
      const user = rotate(data.usernames);
      return flowThenPost(
        '/v1/login',
        (id) => `/v1/flows/${id}/password`,
        200,
        () => ({
          username: user(),
          password: data.password,
        }),
      );
    }
    case 'password': {
      const user = rotate(data.usernames);
      return bearerPost('/v1/authenticate/password', () => ({
        username: user(),
        password: data.password,
      }));
    }
    case 'oidc-code':
    case 'oidc-refresh': {
      const oidc = data.oidc!;
      const refresh = scenario === 'oidc-refresh';
      const form = {
        authorization: oidc.basic,
        'content-type': 'application/x-www-form-urlencoded',
      };
      // autocannon clears a connection's context after each request, so a chain's next
      // token waits in this queue: each response puts the token it rotated to back, and
      // with as many chains as connections every request finds one.
      const chains = [...oidc.refreshTokens];
      const code = refresh ? undefined : rotate(oidc.codes);
      const params = (): Record<string, string> => {
        if (!code) return { grant_type: 'refresh_token', refresh_token: chains.shift() ?? 'none' };
        const next = code();
        return {
          grant_type: 'authorization_code',
          code: next.code,
          code_verifier: next.verifier,
          redirect_uri: oidc.redirectUri,
        };
      };
      return {
        expected: 200,
        measured,
        requests: [
          {
            method: 'POST',
            path: oidc.tokenPath,
            setupRequest: (request) => ({
              ...request,
              headers: form,
              body: new URLSearchParams(params()).toString(),
            }),
            onResponse: refresh
              ? (status, body) => {
                  if (status === 200) {
                    chains.push((JSON.parse(body) as { refresh_token: string }).refresh_token);
                  }
                }
              : undefined,
          },
        ],
      };
    }
    case 'oidc-userinfo': {
      const oidc = data.oidc!;
      const token = rotate(oidc.accessTokens);
      return {
        expected: 200,
        measured,
        requests: [
          {
            method: 'GET',
            path: oidc.userinfoPath,
            setupRequest: (request) => ({
              ...request,
              headers: { authorization: `Bearer ${token()}` },
            }),
          },
        ],
      };
    }
    case 'signup': {
      // A new identity per operation: a registration flow, then the password sign-up
      // (the policy, one argon2 hash, the identity, its audit row and its session).
      const username = freshUsernames();
      return flowThenPost(
        '/v1/registration',
        (id) => `/v1/registration/${id}/password`,
        201,
        () => ({ username: username(), password: SIGNUP_PASSWORD }),
      );
    }
  }
}

/** A password the sign-up policy accepts; no bench username is part of it. */
export const SIGNUP_PASSWORD = 'violet kettle drums sideways 42';

/** Usernames no other round or process of the run signs up with. */
function freshUsernames(): () => string {
  const prefix = `b${process.pid.toString(36)}${Date.now().toString(36)}`;
  let next = 0;
  return () => `${prefix}${(next++).toString(36)}`;
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const data = JSON.parse(readFileSync(spec.dataFile, 'utf8')) as LoadData;
  const { requests, expected, measured } = plan(spec.scenario, data);
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  let ops = 0;
  let responses = 0;
  const unexpected: Record<string, number> = {};
  const started = process.hrtime.bigint();
  const result = await new Promise<Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        connections: spec.connections,
        ...(spec.amount ? { amount: spec.amount } : { duration: spec.durationSec }),
        timeout: 30,
        requests,
      },
      (error, value) => (error ? reject(error) : resolve(value)),
    );
    instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
      responses += 1;
      if (!measured()) {
        if (status >= 300) unexpected[status] = (unexpected[status] ?? 0) + 1;
        return;
      }
      if (status === expected) ops += 1;
      else unexpected[status] = (unexpected[status] ?? 0) + 1;
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = ms;
    });
  });
  const durationSec = Number(process.hrtime.bigint() - started) / 1e9;
  const sorted = latencies.subarray(0, count).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    ops,
    opsPerSec: ops / durationSec,
    responses,
    durationSec,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: count ? sum / count : NaN,
    unexpected,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}
