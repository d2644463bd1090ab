import { newId } from '../../lib/ids.js';
import type { Actor } from '../audit/audit-log.js';
import { DomainError, validationError } from '../errors.js';
import { insertNewIdentity, inserting } from '../identities/identity-service.js';
import { type Identity, type IdentityRecord, toIdentity } from '../identities/identity.js';
import { addressKey } from '../login-flows/address-key.js';
import {
  type FlowDeps,
  type FlowLookup,
  type FlowPage,
  refuseOnFlow,
  requireOpenFlow,
} from '../login-flows/flow-service.js';
import type { FlowRecord } from '../login-flows/flow.js';
import { BROWSER_ACTOR } from '../login-flows/sign-in-audit.js';
import type { MailCodeRecord } from '../mail-codes/mail-code.js';
import { keepChallenge, takeChallenge, userHandleOf } from '../passkeys/challenges.js';
import { type PasskeyRecord, defaultPasskeyName } from '../passkeys/passkey.js';
import { type RelyingPartySettings, type WebAuthn, relyingParty } from '../passkeys/webauthn.js';
import type { PasswordHasher } from '../passwords/password-hasher.js';
import { type PasswordPolicy, requirePasswordPolicy } from '../password-policy/policy.js';
import { consumeRateLimit } from '../rate-limit/rate-limiter.js';
import type { MintedSession, SessionDevice } from '../sessions/session.js';
import { type SignedInBy, completeSignIn } from '../sign-in/complete-sign-in.js';
import type { Store } from '../store.js';
import { UniqueViolation } from '../unique-violation.js';
import {
  type VerificationDeps,
  startEmailVerification,
} from '../verification/email-verification.js';
import {
  type RegistrationEmail,
  type SignUpProfile,
  parseSignUpProfile,
  requireSignUpPassword,
} from './sign-up-profile.js';

/** What a sign-up uses: the flow mechanics, the identity rules, the mail and the passkeys. */
export interface RegistrationDeps
  extends VerificationDeps, FlowLookup, Pick<FlowDeps, 'flows' | 'sessionTtlMs'> {
  store: Store;
  hasher: PasswordHasher;
  passwordPolicy: PasswordPolicy;
  webauthn: WebAuthn;
  relyingParty: RelyingPartySettings;
  /** SERVICE_REGISTRATION_EMAIL. */
  registrationEmail: RegistrationEmail;
}

/** One submission to a registration flow, either way. */
export interface SignUpSubmission {
  flowId: string;
  /** As received: anything but the flow's token is refused, a missing one too. */
  csrfToken: unknown;
  /** The body's fields as received (`username`, `display_name`, `email`, and the credential). */
  fields: Readonly<Record<string, unknown>>;
  /** The client address, counted per submission. */
  address: string;
  /** Recorded on the session. */
  device: SessionDevice;
  /** The verification mail's language (the browser's first). */
  locale?: string;
  /** The page the submission comes from: a passkey is made for its origin. */
  page: FlowPage;
}

export interface SignedUp {
  identity: Identity;
  /** The new session; null when verified addresses are required (the user verifies first). */
  minted: MintedSession | null;
  /** The verification the address's mail belongs to; null when no address was given. */
  verification: MailCodeRecord | null;
  returnTo: string | null;
}

/**
 * Every submission to a registration flow counts against the client address, under the
 * login flows' own key and rule (SERVICE_RATE_LIMIT_LOGIN_IP): signing up buys no
 * attempts that signing in would not have.
 */
async function countSubmission(deps: RegistrationDeps, address: string): Promise<void> {
  await consumeRateLimit(
    deps.store,
    deps.clock,
    `flow:ip:${addressKey(address)}`,
    deps.flows.submitRule,
  );
}

/**
 * A name or address already held ends the submission before any argon2 work, recorded on
 * the flow and counted to its cap like a wrong password (docs/registration.md says why):
 * probing names or addresses costs what probing passwords does. The UNIQUE indexes still
 * decide a race between two sign-ups that both pass this (`finishSignUp`).
 */
async function refuseTaken(
  deps: RegistrationDeps,
  flow: FlowRecord,
  profile: SignUpProfile,
): Promise<void> {
  if (await deps.store.findIdentityByUsername(profile.username)) {
    await refuseOnFlow(deps, flow.id, 'username_taken');
  }
  if (profile.email !== null && (await deps.store.findIdentityByEmail(profile.email))) {
    await refuseOnFlow(deps, flow.id, 'email_taken');
  }
}

/** The flow's own identity id: the one its passkey's user handle names. */
function identityIdOf(flow: FlowRecord): string {
  if (flow.identity_id === null) throw new DomainError('invalid_token');
  return flow.identity_id;
}

function newIdentity(
  deps: RegistrationDeps,
  flow: FlowRecord,
  profile: SignUpProfile,
  passwordHash: string | null,
): IdentityRecord {
  const now = deps.clock.now();
  return {
    id: identityIdOf(flow),
    username: profile.username,
    display_name: profile.displayName,
    avatar_url: null,
    email: profile.email,
    email_verified_at: null,
    state: 'active',
    password_hash: passwordHash,
    created_at: now,
    updated_at: now,
  };
}

/**
 * The end of every sign-up, in one transaction: the flow is claimed (a conditional UPDATE:
 * of racing submissions to one flow exactly one gets on), the identity inserted (its
 * UNIQUE indexes decide between racing flows), `alsoWrite` (a passkey), the audit row that
 * announces the identity (`identity_register`, webhook `identity.created`), the address's
 * verification mail, and, unless verified addresses are required, the session through
 * `completeSignIn`. Any refusal rolls all of it back; a name or address taken meanwhile is
 * then recorded on the flow like the early check's.
 */
async function finishSignUp(
  deps: RegistrationDeps,
  flow: FlowRecord,
  record: IdentityRecord,
  by: SignedInBy,
  input: SignUpSubmission,
  alsoWrite?: (tx: Store, actor: Actor) => Promise<void>,
): Promise<SignedUp> {
  const actor: Actor = {
    ...BROWSER_ACTOR,
    details: { via: 'registration', flow_id: flow.id, address: input.address },
  };
  const signIn = deps.registrationEmail !== 'verified';
  try {
    return await inserting(deps.store, record, () =>
      deps.store.transaction(async (tx) => {
        if (!(await tx.completeFlow(flow.id, deps.clock.now(), 'created'))) {
          throw new DomainError('invalid_token');
        }
        await insertNewIdentity(tx, record);
        await alsoWrite?.(tx, actor);
        await deps.audit.write(tx, actor, {
          action: 'identity_register',
          target_identity: record.id,
          details: { username: record.username, sign_up_method: by.id },
        });
        const verification =
          record.email === null
            ? null
            : (
                await startEmailVerification(deps, tx, actor, {
                  identityId: record.id,
                  email: record.email,
                  ...(input.locale === undefined ? {} : { locale: input.locale }),
                })
              ).record;
        const minted = signIn
          ? await completeSignIn(
              deps,
              tx,
              record,
              by,
              {
                actor: BROWSER_ACTOR,
                action: 'login',
                details: {
                  flow_id: flow.id,
                  username: record.username,
                  sign_in_method: by.id,
                  address: input.address,
                },
              },
              input.device,
            )
          : null;
        return { identity: toIdentity(record), minted, verification, returnTo: flow.return_to };
      }),
    );
  } catch (error) {
    if (
      error instanceof DomainError &&
      (error.code === 'username_taken' || error.code === 'email_taken')
    ) {
      return refuseOnFlow(deps, flow.id, error.code);
    }
    throw error;
  }
}

/**
 * `POST /v1/registration/{id}/password`: flow and CSRF, the fields, the per-address limit,
 * a taken name or address, the password policy, then the hash (outside any transaction:
 * argon2 never holds a lock) and `finishSignUp`.
 */
export async function signUpWithPassword(
  deps: RegistrationDeps,
  input: SignUpSubmission,
): Promise<SignedUp> {
  const flow = await requireOpenFlow(deps, input.flowId, input.csrfToken, 'registration');
  const profile = parseSignUpProfile(input.fields, deps.registrationEmail);
  const password = requireSignUpPassword(input.fields);
  await countSubmission(deps, input.address);
  await refuseTaken(deps, flow, profile);
  await requirePasswordPolicy(deps.passwordPolicy, password, {
    username: profile.username,
    displayName: profile.displayName,
  });
  const passwordHash = await deps.hasher.hash(password);
  const record = newIdentity(deps, flow, profile, passwordHash);
  return finishSignUp(deps, flow, record, { id: 'password', assurance: 'aal1' }, input);
}

/**
 * `POST /v1/registration/{id}/passkey/options`: creation options for the identity the
 * flow will create (its id is the user handle, as for a passkey added on the account page),
 * with a challenge bound to the flow (a new request replaces it). Discoverable credential
 * and user verification required, as on the account page. A taken name or address is
 * refused here already, so no passkey is made for a sign-up that cannot succeed.
 */
export async function passkeySignUpOptions(
  deps: RegistrationDeps,
  input: Pick<SignUpSubmission, 'flowId' | 'csrfToken' | 'fields' | 'page'>,
): Promise<Record<string, unknown>> {
  const flow = await requireOpenFlow(deps, input.flowId, input.csrfToken, 'registration');
  const profile = parseSignUpProfile(input.fields, deps.registrationEmail);
  await refuseTaken(deps, flow, profile);
  const issued = await deps.webauthn.registrationOptions({
    rp: relyingParty(deps.relyingParty, input.page.host, input.page.origins),
    userHandle: userHandleOf(identityIdOf(flow)),
    userName: profile.username,
    userDisplayName: profile.displayName,
    exclude: [],
  });
  await keepChallenge(deps.store, { flowId: flow.id }, issued.challenge, flow.expires_at);
  return issued.options;
}

/**
 * `POST /v1/registration/{id}/passkey`: a sign-up with no password at all. The browser's
 * registration response is verified against the flow's challenge (taken: it serves once)
 * and the page's origin, then the identity and its passkey are written together by
 * `finishSignUp`; the session is a passkey's (`aal2`).
 */
export async function signUpWithPasskey(
  deps: RegistrationDeps,
  input: SignUpSubmission,
): Promise<SignedUp> {
  const flow = await requireOpenFlow(deps, input.flowId, input.csrfToken, 'registration');
  const profile = parseSignUpProfile(input.fields, deps.registrationEmail);
  const { credential } = input.fields;
  if (typeof credential !== 'object' || credential === null || Array.isArray(credential)) {
    throw validationError('credential (the passkey registration response) is required');
  }
  await countSubmission(deps, input.address);
  await refuseTaken(deps, flow, profile);
  const now = deps.clock.now();
  const expectedChallenge = await takeChallenge(deps.store, { flowId: flow.id }, now);
  if (!expectedChallenge) {
    throw validationError('no passkey sign-up in progress: ask for new options and try again');
  }
  const proven = await deps.webauthn.verifyRegistration({
    rp: relyingParty(deps.relyingParty, input.page.host, input.page.origins),
    response: credential,
    expectedChallenge,
  });
  if (!proven) throw validationError('the passkey could not be verified: try again');
  const record = newIdentity(deps, flow, profile, null);
  const passkey: PasskeyRecord = {
    id: newId(),
    identity_id: record.id,
    credential_id: proven.credentialId,
    public_key: proven.publicKey,
    sign_count: proven.signCount,
    transports: JSON.stringify(proven.transports),
    device_type: proven.deviceType,
    backed_up: proven.backedUp ? 1 : 0,
    name: defaultPasskeyName(now),
    created_at: now,
    last_used_at: null,
  };
  const by: SignedInBy = { id: 'passkey', assurance: 'aal2' };
  return finishSignUp(deps, flow, record, by, input, async (tx, actor) => {
    try {
      await tx.insertPasskey(passkey);
    } catch (error) {
      if (error instanceof UniqueViolation)
        throw validationError('this passkey is already registered');
      throw error;
    }
    await deps.audit.write(tx, actor, {
      action: 'passkey_add',
      target_identity: record.id,
      details: { passkey_id: passkey.id, name: passkey.name },
    });
  });
}
