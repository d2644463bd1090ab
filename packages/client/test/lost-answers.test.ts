import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  TesseraError,
  checkToken,
  createTesseraClient,
  type Identity,
  type TesseraClient,
} from '@tessera/client';
import { GRANTS } from '../../../src/domain/service-tokens/service-token.js';
import {
  type FlowTestApp,
  LOOSE_SIGN_IN_LIMITS,
  PASSWORD,
  createFlowApp,
  startFlow,
} from '../../../test/flows/helpers.js';
import { enrolledIdentity, passwordStep, totpCode } from '../../../test/second-factor/helpers.js';
import { startLossyFront, type Fate, type LossyFront } from './lossy-front.js';

/** The TesseraError a promise rejects with. */
async function failure(pending: Promise<unknown>): Promise<TesseraError> {
  const error = await pending.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TesseraError);
  return error as TesseraError;
}

const FAKE_ASSERTION = {
  id: 'AAAA',
  rawId: 'AAAA',
  type: 'public-key',
  response: { clientDataJSON: 'e30', authenticatorData: 'AAAA', signature: 'AAAA' },
  clientExtensionResults: {},
} as const;

/**
 * Issue 22 item 10: a real Tessera (in-process, listening on HTTP) behind a real proxy that
 * loses, stalls or replaces answers after Tessera acted on the request.
 */
describe('the client when answers are lost after Tessera acted', () => {
  let t: FlowTestApp;
  let front: LossyFront;
  let client: TesseraClient;
  /** A deadline short enough to wait out a stalled body in a test. */
  let impatient: TesseraClient;
  let alice: Identity;
  let counter = 0;
  const unique = (base: string) => `${base}-${++counter}`;

  beforeAll(async () => {
    t = await createFlowApp('sqlite', {
      ...LOOSE_SIGN_IN_LIMITS,
      SERVICE_RATE_LIMIT_SECOND_FACTOR: '1000/15m',
    });
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const address = t.app.server.address() as { port: number };
    front = await startLossyFront(`http://127.0.0.1:${address.port}`);
    const serviceToken = await t.token(...GRANTS);
    const options = {
      baseUrl: front.url,
      serviceToken,
      acceptLegacyTokens: checkToken('service', serviceToken) !== 'ok',
      retry: { retries: 2, baseDelayMs: 1, maxDelayMs: 5 },
    };
    client = createTesseraClient(options);
    impatient = createTesseraClient({ ...options, timeoutMs: 1_000 });
    alice = await client.getIdentity(t.alice.id);
  });
  afterAll(async () => {
    await front?.close();
    await t?.close();
  });

  /** Runs `call` with every answer meeting `fate`; returns its error and the backend's count. */
  async function withFate(fate: Fate, path: string, call: () => Promise<unknown>) {
    front.script = [fate, fate, fate];
    const before = front.count('POST', path);
    const error = await failure(call());
    front.script = [];
    return { error, sent: front.count('POST', path) - before };
  }

  const flowCall = (submit: (flowId: string, csrf: string) => Promise<unknown>) => async () => {
    const flow = await startFlow(t);
    return submit(flow.id, flow.csrf_token);
  };

  /** Every call that creates something or spends an attempt or a code. */
  const SPENDS: [path: string, call: () => Promise<unknown>][] = [
    ['/v1/register', () => client.register({ username: unique('reg'), password: PASSWORD })],
    [
      '/v1/register-and-authenticate',
      () => client.registerAndAuthenticate({ username: unique('rna'), password: PASSWORD }),
    ],
    [
      '/v1/authenticate/password',
      () => client.authenticatePassword({ username: 'alice', password: PASSWORD }),
    ],
    [
      '/v1/authenticate/link',
      () =>
        client.authenticateLink({
          provider: 'github',
          subject: unique('subject'),
          seed: { username: unique('octo'), display_name: 'Octo' },
        }),
    ],
    [
      '/links',
      () => client.createLink(alice.id, { provider: 'gitlab', subject: unique('subject') }),
    ],
    [
      '/password',
      flowCall((id, csrf) =>
        client.submitFlowPassword(id, { username: 'alice', password: PASSWORD, csrf_token: csrf }),
      ),
    ],
    [
      '/passkey',
      flowCall((id, csrf) =>
        client.submitFlowPasskey(id, { credential: FAKE_ASSERTION, csrf_token: csrf }),
      ),
    ],
    [
      '/totp',
      flowCall((id, csrf) => client.submitFlowTotp(id, { code: '123456', csrf_token: csrf })),
    ],
    [
      '/recovery_code',
      flowCall((id, csrf) =>
        client.submitFlowRecoveryCode(id, { recovery_code: 'abcd-efgh', csrf_token: csrf }),
      ),
    ],
  ];

  it('sends a call that creates or spends once, whatever became of its answer', async () => {
    const FATES = [
      ['lose', { code: 'unavailable', status: 0, sent: 1 }],
      [{ gateway: 503 }, { code: 'unavailable', status: 503, sent: 1 }],
      [{ gateway: 504 }, { code: 'timeout', status: 504, sent: 1 }],
    ] as const;
    const outcomes: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    for (const [path, call] of SPENDS) {
      for (const [fate, outcome] of FATES) {
        const { error, sent } = await withFate(fate, path, call);
        const name = `${path} ${JSON.stringify(fate)}`;
        outcomes[name] = { code: error.code, status: error.status, sent };
        expected[name] = outcome;
      }
    }
    expect(outcomes).toEqual(expected);
  });

  it('does not spend a recovery code twice: the lost answer is reported, the flow is done', async () => {
    const { username, recoveryCodes } = await enrolledIdentity(t, 'rosa');
    const { flow, res } = await passwordStep(t, username);
    expect(res.statusCode).toBe(403);
    const { error, sent } = await withFate('lose', '/recovery_code', () =>
      client.submitFlowRecoveryCode(flow.id, {
        recovery_code: recoveryCodes[0]!,
        csrf_token: flow.csrf_token,
      }),
    );
    expect(error).toMatchObject({ code: 'unavailable', status: 0, retryable: true });
    expect(sent).toBe(1);
    // The one attempt signed the user in: a repeat would have met a completed flow.
    expect((await client.getFlow(flow.id)).state).toBe('completed');
  });

  it('does not repeat a TOTP code whose answer stalled mid-body', async () => {
    const { username, secret } = await enrolledIdentity(t, 'tom');
    const { flow } = await passwordStep(t, username);
    const { error, sent } = await withFate('stall-body', '/totp', async () =>
      impatient.submitFlowTotp(flow.id, {
        code: await totpCode(secret, t.clock.now()),
        csrf_token: flow.csrf_token,
      }),
    );
    expect(error).toMatchObject({ code: 'timeout', status: 0 });
    expect(sent).toBe(1);
    expect((await client.getFlow(flow.id)).state).toBe('completed');
  });

  it('retries a read whose body stalls past the deadline, and returns the next answer', async () => {
    front.script = ['stall-body'];
    expect(await impatient.getIdentity(alice.id)).toEqual(alice);
    expect(front.script).toEqual([]);
    expect(front.count('GET', `/v1/identities/${alice.id}`)).toBeGreaterThanOrEqual(2);
  });

  it('repeats a call that only reads or ends something when its answer is lost', async () => {
    const { token } = await client.authenticatePassword({ username: 'alice', password: PASSWORD });
    const before = front.count('POST', '/v1/sessions/verify');
    front.script = ['lose'];
    expect((await client.verifySession(token)).identity.id).toBe(alice.id);
    expect(front.count('POST', '/v1/sessions/verify') - before).toBe(2);
    front.script = ['lose'];
    await client.revokeSession({ token });
    expect((await failure(client.verifySession(token))).code).toBe('invalid_token');
  });

  it('reports a delete whose first answer was lost as done, and an unknown one as not_found', async () => {
    const key = { provider: 'github', subject: unique('deleted') };
    await client.createLink(alice.id, key);
    const before = front.count('DELETE', '/links');
    front.script = ['lose'];
    await client.deleteLink(alice.id, key);
    expect(front.count('DELETE', '/links') - before).toBe(2);
    expect(await client.listLinks(alice.id)).not.toContainEqual(expect.objectContaining(key));
    expect(await failure(client.deleteLink(alice.id, key))).toMatchObject({
      code: 'not_found',
      status: 404,
    });
  });
});
