import type { AuthenticationResponseJSON } from '@simplewebauthn/browser';
import { describe, expectTypeOf, it } from 'vitest';
import type {
  FlowEmailCodeRequest,
  FlowEmailCodeSubmission,
  FlowPasskeySubmission,
  FlowPasswordSubmission,
  FlowRecoveryCodeSubmission,
  FlowTotpSubmission,
  LinkSignIn,
  PasswordCredentials,
  SessionRevocation,
  TesseraClient,
  components,
} from '@tessera/client';
import type { BrowserClient } from '@tessera/client/browser';

type Generated = components['schemas'];

/**
 * Compile-time checks, run by `npm run typecheck` (CI): each `@ts-expect-error` line must
 * fail to compile, or the typecheck fails with "Unused '@ts-expect-error' directive". The
 * function holding them is never called: nothing here is sent.
 */
export function refusedAtCompileTime(tessera: TesseraClient, browser: BrowserClient): void {
  const csrf_token = 'from startLogin';
  // @ts-expect-error username, password and csrf_token are required
  void tessera.submitFlowPassword('tess_f_x', {});
  // @ts-expect-error csrf_token is required
  void tessera.submitFlowPassword('tess_f_x', { username: 'a', password: 'b' });
  // @ts-expect-error the browser client takes the same exact body
  void browser.submitFlowPassword('tess_f_x', { username: 'a', csrf_token });
  // @ts-expect-error the code is required
  void tessera.submitFlowTotp('tess_f_x', { csrf_token });
  // @ts-expect-error the recovery code is required
  void tessera.submitFlowRecoveryCode('tess_f_x', { csrf_token });
  // @ts-expect-error the credential is a passkey assertion, not anything
  void tessera.submitFlowPasskey('tess_f_x', { credential: 'abc', csrf_token });
  // @ts-expect-error the address is required
  void tessera.challengeFlowEmailCode('tess_f_x', { csrf_token });
  // @ts-expect-error the code is required
  void tessera.submitFlowEmailCode('tess_f_x', { address: 'a@example.com', csrf_token });
  // @ts-expect-error a seed needs display_name
  void tessera.authenticateLink({ provider: 'p', subject: 's', seed: { username: 'u' } });
  void tessera.authenticateLink({
    provider: 'p',
    subject: 's',
    // @ts-expect-error a seed has no other field
    seed: { username: 'u', display_name: 'U', avatar_url: null },
  });
  // @ts-expect-error a seed is an object
  void tessera.authenticateLink({ provider: 'p', subject: 's', seed: 'u' });
  // @ts-expect-error one of session_id and token
  void tessera.revokeSession({});
  // @ts-expect-error not both
  void tessera.revokeSession({ session_id: 'id', token: 'tess_s_x' });
  // @ts-expect-error one second factor, not both
  void tessera.authenticatePassword({
    username: 'a',
    password: 'b',
    totp_code: '1',
    recovery_code: '2',
  });
}

describe('request body types', () => {
  it('accept what the server accepts, and fit the generated schemas', () => {
    expectTypeOf<FlowPasswordSubmission>().toExtend<Generated['FlowPasswordSubmission']>();
    expectTypeOf<FlowTotpSubmission>().toExtend<Generated['FlowTotpSubmission']>();
    expectTypeOf<FlowRecoveryCodeSubmission>().toExtend<Generated['FlowRecoveryCodeSubmission']>();
    expectTypeOf<FlowPasskeySubmission>().toExtend<Generated['FlowPasskeySubmission']>();
    expectTypeOf<FlowEmailCodeRequest>().toExtend<Generated['FlowEmailCodeRequest']>();
    expectTypeOf<FlowEmailCodeSubmission>().toExtend<Generated['FlowEmailCodeSubmission']>();
    expectTypeOf<LinkSignIn>().toExtend<Generated['LinkSignIn']>();
    expectTypeOf<SessionRevocation>().toExtend<Generated['SessionRevocation']>();
    expectTypeOf<PasswordCredentials>().toExtend<Generated['PasswordCredentials']>();
    // What @simplewebauthn/browser's startAuthentication gives is a passkey assertion.
    expectTypeOf<AuthenticationResponseJSON>().toExtend<FlowPasskeySubmission['credential']>();
    expectTypeOf({ session_id: 'id' }).toExtend<SessionRevocation>();
    expectTypeOf({ token: 'tess_s_x' }).toExtend<SessionRevocation>();
    expectTypeOf({
      username: 'a',
      password: 'b',
      recovery_code: 'c',
    }).toExtend<PasswordCredentials>();
    expectTypeOf(refusedAtCompileTime).toBeFunction();
  });
});
