import { describe, expect, it } from 'vitest';
import {
  TesseraError,
  createSessionGuard,
  createTesseraClient,
  type TesseraClientOptions,
} from '@tessera/client';
import { checksummedToken, legacyToken } from './token-fixtures.js';

/** The TesseraError `make` throws. */
function thrown(make: () => unknown): TesseraError {
  let error: unknown;
  try {
    make();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(TesseraError);
  return error as TesseraError;
}

// Nothing listens on port 9: a request the client made anyway would fail as `unavailable`.
const OFFLINE = 'http://127.0.0.1:9';

/**
 * Issue 22 item 10: a bad option is a TesseraError naming it, when the client is made (or,
 * for `clientIp`, when the call is), never a TypeError out of fetch's header checks.
 */
describe('the client’s options, checked before anything is sent', () => {
  const make = (options: Partial<TesseraClientOptions>) => () =>
    createTesseraClient({ baseUrl: OFFLINE, ...options });

  it('refuses a mistyped service token as invalid_service_token, saying what is wrong', () => {
    const good = checksummedToken('service');
    for (const serviceToken of [
      'tess_svc_nope',
      `${good}\n`,
      ` ${good}`,
      good.slice(0, -1),
      `Bearer ${good}`,
      good.replace('tess_svc_', 'tess_s_'),
    ]) {
      const error = thrown(make({ serviceToken }));
      expect(error).toMatchObject({ code: 'invalid_service_token', status: 401 });
      expect(error.detail).toMatch(/^serviceToken is not a Tessera service token/);
    }
    const legacy = thrown(make({ serviceToken: legacyToken('service') }));
    expect(legacy).toMatchObject({ code: 'invalid_service_token', status: 401 });
    expect(legacy.detail).toMatch(/acceptLegacyTokens: true/);
    expect(() => make({ serviceToken: good })()).not.toThrow();
  });

  it('refuses a baseUrl that is not an absolute http(s) URL', () => {
    for (const baseUrl of ['auth.example.com', '/tessera', 'ftp://auth.example.com', '']) {
      const error = thrown(make({ baseUrl }));
      expect(error).toMatchObject({ code: 'validation_error', status: 0 });
      expect(error.detail).toMatch(/^baseUrl must be an absolute http\(s\) URL/);
    }
  });

  it('refuses extra headers fetch could not send', () => {
    const bad: Record<string, string>[] = [
      { 'user-agent': 'app\r\nx-evil: 1' },
      { 'bad header': 'x' },
    ];
    for (const headers of bad) {
      const error = thrown(make({ headers }));
      expect(error).toMatchObject({ code: 'validation_error', status: 0 });
      expect(error.detail).toMatch(/^headers\..+ is not a valid HTTP header$/);
    }
  });

  it('refuses a clientIp fetch could not send, as a rejected call', async () => {
    const client = createTesseraClient({ baseUrl: OFFLINE, retry: { retries: 0 } });
    const pending = client.authenticatePassword(
      { username: 'alice', password: 'correct horse battery staple' },
      { clientIp: '203.0.113.9\r\nx-evil: 1' },
    );
    await expect(pending).rejects.toThrow(TesseraError);
    await expect(pending).rejects.toMatchObject({
      code: 'validation_error',
      status: 0,
      detail: 'clientIp is not a valid HTTP header',
    });
  });

  it('refuses a session guard that must verify without a service token', () => {
    const error = thrown(() => createSessionGuard({ baseUrl: OFFLINE, check: 'verify' }));
    expect(error).toMatchObject({ code: 'validation_error', status: 0 });
  });
});
