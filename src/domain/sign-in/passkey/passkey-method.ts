import type { Clock } from '../../../lib/clock.js';
import { validationError } from '../../errors.js';
import {
  keepChallenge,
  peekChallenge,
  takeChallenge,
  userHandleOf,
} from '../../passkeys/challenges.js';
import { transportsOf } from '../../passkeys/passkey.js';
import { type RelyingPartySettings, type WebAuthn, relyingParty } from '../../passkeys/webauthn.js';
import type { Store } from '../../store.js';
import type { CredentialFailure, SignInContext, SignInMethod, SignInOutcome } from '../method.js';

export interface PasskeyMethodDeps {
  store: Pick<
    Store,
    | 'findPasskeyByCredentialId'
    | 'findIdentityById'
    | 'putWebAuthnChallenge'
    | 'takeWebAuthnChallenge'
    | 'findWebAuthnChallenge'
  >;
  clock: Clock;
  webauthn: WebAuthn;
  relyingParty: RelyingPartySettings;
}

/** The browser's assertion (`navigator.credentials.get`, as JSON), checked for shape only. */
export interface PasskeyInput {
  credential: {
    id: string;
    rawId: string;
    type: 'public-key';
    response: {
      clientDataJSON: string;
      authenticatorData: string;
      signature: string;
      userHandle?: string;
    };
    clientExtensionResults: Record<string, unknown>;
    authenticatorAttachment?: string;
  };
}

export const MISSING_ASSERTION = 'credential (the passkey assertion) is required';

const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** Far above any real credential id (at most 1023 bytes) or signature; keeps junk bounded. */
const MAX_PART = 16_384;

function part(value: unknown, field: string, optional = false): string | undefined {
  if (value === undefined && optional) return undefined;
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_PART) {
    throw validationError(`${field} must be a base64url string`);
  }
  if (!BASE64URL.test(value)) throw validationError(`${field} must be a base64url string`);
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseAssertion(raw: unknown): PasskeyInput['credential'] {
  if (raw === undefined) throw validationError(MISSING_ASSERTION);
  if (!isObject(raw)) throw validationError('credential must be an object');
  if (raw.type !== 'public-key') throw validationError('credential.type must be public-key');
  const response = raw.response;
  if (!isObject(response)) throw validationError('credential.response must be an object');
  const extensions = raw.clientExtensionResults;
  if (extensions !== undefined && !isObject(extensions)) {
    throw validationError('credential.clientExtensionResults must be an object');
  }
  const attachment = raw.authenticatorAttachment;
  if (attachment !== undefined && attachment !== null && typeof attachment !== 'string') {
    throw validationError('credential.authenticatorAttachment must be a string');
  }
  const userHandle = part(response.userHandle ?? undefined, 'credential.response.userHandle', true);
  return {
    id: part(raw.id, 'credential.id')!,
    rawId: part(raw.rawId, 'credential.rawId')!,
    type: 'public-key',
    response: {
      clientDataJSON: part(response.clientDataJSON, 'credential.response.clientDataJSON')!,
      authenticatorData: part(response.authenticatorData, 'credential.response.authenticatorData')!,
      signature: part(response.signature, 'credential.response.signature')!,
      ...(userHandle === undefined ? {} : { userHandle }),
    },
    clientExtensionResults: extensions ?? {},
    ...(typeof attachment === 'string' ? { authenticatorAttachment: attachment } : {}),
  };
}

function requireContext(context: SignInContext | undefined): SignInContext {
  // Only a flow issues passkey challenges: a sign-in without one cannot use a passkey.
  if (!context) throw validationError('a passkey signs in through a login flow');
  return context;
}

/**
 * A passkey (WebAuthn discoverable credential), usernameless: the flow's challenge (issued
 * by `challenge`, bound to the flow, single use) signed by a credential an identity
 * registered, on one of the service's pages, with user verification. The credential id in
 * the assertion names the passkey and so the identity; an unknown one, a signature that
 * does not verify, a used or foreign challenge and a counter that went backwards are all
 * `invalid_credentials`, counted to the flow's attempt cap like a wrong password.
 */
export const passkeyMethod = {
  id: 'passkey',
  // A user-verifying passkey is multi-factor (NIST SP 800-63B: something you have, unlocked
  // by something you know or are), so it never asks for a second factor.
  assurance: 'aal2',

  parse(fields) {
    return { credential: parseAssertion(fields.credential) };
  },

  claim(fields) {
    const credential = fields?.credential;
    const id = isObject(credential) ? credential.id : undefined;
    // The credential id is public (the browser sends it with every assertion); bounded.
    return {
      credential_id: typeof id === 'string' && id.length <= 1400 && BASE64URL.test(id) ? id : null,
    };
  },

  async challenge(deps, context) {
    const rp = relyingParty(deps.relyingParty, context.host, context.origins);
    const issued = await deps.webauthn.authenticationOptions(rp);
    await keepChallenge(
      deps.store,
      { flowId: context.flowId },
      issued.challenge,
      context.flowExpiresAt,
    );
    return issued.options;
  },

  async authenticate(deps, input, notes, context): Promise<SignInOutcome> {
    const where = requireContext(context);
    const now = deps.clock.now();
    const binding = { flowId: where.flowId };
    // A challenge serves one submission, right or wrong: a wrong one takes it here, a right
    // one in the transaction that mints (the redemption), so that of racing right ones only
    // the one that completes the flow uses it.
    const refuse = async (failure: CredentialFailure): Promise<SignInOutcome> => {
      await takeChallenge(deps.store, binding, now);
      return { failure };
    };
    const challenge = await peekChallenge(deps.store, binding, now);
    const passkey = await deps.store.findPasskeyByCredentialId(input.credential.id);
    if (!challenge || !passkey) return refuse('invalid_credentials');
    notes.identityId = passkey.identity_id;
    const handle = input.credential.response.userHandle;
    if (
      handle !== undefined &&
      handle !== Buffer.from(userHandleOf(passkey.identity_id)).toString('base64url')
    ) {
      return refuse('invalid_credentials');
    }
    const verified = await deps.webauthn.verifyAuthentication({
      rp: relyingParty(deps.relyingParty, where.host, where.origins),
      response: input.credential,
      credential: {
        credentialId: passkey.credential_id,
        publicKey: passkey.public_key,
        signCount: passkey.sign_count,
        transports: transportsOf(passkey),
      },
      expectedChallenge: challenge.matches,
    });
    if (!verified) return refuse('invalid_credentials');
    const identity = await deps.store.findIdentityById(passkey.identity_id);
    if (!identity) return refuse('invalid_credentials');
    if (identity.state !== 'active') return refuse('identity_disabled');
    const use = {
      sign_count: verified.signCount,
      backed_up: verified.backedUp ? 1 : 0,
      device_type: verified.deviceType,
      last_used_at: now,
    };
    return {
      identity,
      async redeem(tx) {
        if (!(await challenge.take(tx))) return false;
        await tx.recordPasskeyUse(passkey.id, use);
        return true;
      },
    };
  },
} as const satisfies SignInMethod<'passkey', PasskeyInput, PasskeyMethodDeps>;
