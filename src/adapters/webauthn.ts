import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import type { WebAuthn } from '../domain/passkeys/webauthn.js';

/**
 * Loaded on first use: the library and its ASN.1 dependencies take most of a second to
 * import on a busy machine, which every CLI command and every start-up would pay otherwise.
 */
let loaded: Promise<typeof import('@simplewebauthn/server')> | undefined;
const library = () => (loaded ??= import('@simplewebauthn/server'));

/** How long the browser lets the user take: five minutes, well inside a flow's lifetime. */
const TIMEOUT_MS = 300_000;

function deviceType(type: 'singleDevice' | 'multiDevice'): 'single_device' | 'multi_device' {
  return type === 'multiDevice' ? 'multi_device' : 'single_device';
}

/**
 * The ceremonies by @simplewebauthn/server. The library throws on any response that does not
 * verify (a malformed one included): that is a refusal, not a fault, so it becomes null.
 * User verification is required both ways: a passkey must be unlocked by its owner.
 */
export const simpleWebAuthn: WebAuthn = {
  async registrationOptions(request) {
    const { generateRegistrationOptions } = await library();
    const options = await generateRegistrationOptions({
      rpName: request.rp.name,
      rpID: request.rp.id,
      userName: request.userName,
      userDisplayName: request.userDisplayName,
      userID: new Uint8Array(request.userHandle),
      timeout: TIMEOUT_MS,
      attestationType: 'none',
      excludeCredentials: request.exclude,
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    });
    return { options: options as unknown as Record<string, unknown>, challenge: options.challenge };
  },

  async verifyRegistration({ rp, response, expectedChallenge }) {
    const { verifyRegistrationResponse } = await library();
    try {
      const result = await verifyRegistrationResponse({
        response: response as RegistrationResponseJSON,
        expectedChallenge,
        expectedOrigin: [...rp.origins],
        expectedRPID: rp.id,
        requireUserVerification: true,
      });
      if (!result.verified) return null;
      const info = result.registrationInfo;
      const transports = (response as RegistrationResponseJSON).response.transports;
      return {
        credentialId: info.credential.id,
        publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
        signCount: info.credential.counter,
        transports: Array.isArray(transports)
          ? transports.filter((item): item is string => typeof item === 'string').slice(0, 8)
          : [],
        deviceType: deviceType(info.credentialDeviceType),
        backedUp: info.credentialBackedUp,
      };
    } catch {
      return null;
    }
  },

  async authenticationOptions(rp) {
    const { generateAuthenticationOptions } = await library();
    const options = await generateAuthenticationOptions({
      rpID: rp.id,
      allowCredentials: [],
      userVerification: 'required',
      timeout: TIMEOUT_MS,
    });
    return { options: options as unknown as Record<string, unknown>, challenge: options.challenge };
  },

  async verifyAuthentication({ rp, response, credential, expectedChallenge }) {
    const { verifyAuthenticationResponse } = await library();
    try {
      const result = await verifyAuthenticationResponse({
        response: response as AuthenticationResponseJSON,
        expectedChallenge,
        expectedOrigin: [...rp.origins],
        expectedRPID: rp.id,
        credential: {
          id: credential.credentialId,
          publicKey: new Uint8Array(Buffer.from(credential.publicKey, 'base64url')),
          counter: credential.signCount,
          transports: credential.transports as never,
        },
        requireUserVerification: true,
      });
      if (!result.verified) return null;
      const info = result.authenticationInfo;
      return {
        signCount: info.newCounter,
        deviceType: deviceType(info.credentialDeviceType),
        backedUp: info.credentialBackedUp,
      };
    } catch {
      return null;
    }
  },
};
