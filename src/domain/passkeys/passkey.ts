import { toIso } from '../../lib/clock.js';
import { validationError } from '../errors.js';

/** How many devices a credential lives on, as the authenticator reports it. */
export type PasskeyDeviceType = 'single_device' | 'multi_device';

/** A stored WebAuthn credential (table `passkeys`). */
export interface PasskeyRecord {
  id: string;
  identity_id: string;
  /** The credential id, base64url: how a usernameless sign-in finds the passkey. */
  credential_id: string;
  /** The COSE public key, base64url. */
  public_key: string;
  /** The authenticator's signature counter at its last use (0: it keeps none). */
  sign_count: number;
  /** JSON array of the transports the browser reported (`internal`, `hybrid`, `usb`, …). */
  transports: string;
  device_type: PasskeyDeviceType;
  /** 1 when the authenticator says the credential is backed up (synced), else 0. */
  backed_up: number;
  name: string;
  created_at: number;
  last_used_at: number | null;
}

/** A passkey as the account page, the account API and the operator API show it. */
export interface Passkey {
  id: string;
  identity_id: string;
  name: string;
  device_type: PasskeyDeviceType;
  backed_up: boolean;
  transports: string[];
  created_at: string;
  last_used_at: string | null;
}

export function transportsOf(record: Pick<PasskeyRecord, 'transports'>): string[] {
  try {
    const parsed: unknown = JSON.parse(record.transports);
    return Array.isArray(parsed) ? parsed.filter((item) => typeof item === 'string') : [];
  } catch {
    return [];
  }
}

export function toPasskey(record: PasskeyRecord): Passkey {
  return {
    id: record.id,
    identity_id: record.identity_id,
    name: record.name,
    device_type: record.device_type,
    backed_up: record.backed_up === 1,
    transports: transportsOf(record),
    created_at: toIso(record.created_at),
    last_used_at: record.last_used_at === null ? null : toIso(record.last_used_at),
  };
}

export const PASSKEY_NAME_MAX = 64;

/** A passkey's name: 1-64 characters after trimming, no control characters. */
export function requirePasskeyName(raw: unknown, field = 'name'): string {
  if (typeof raw !== 'string') throw validationError(`${field} must be a string`);
  const name = raw.normalize('NFC').trim();
  if (name.length === 0) throw validationError(`${field} must not be empty`);
  if ([...name].length > PASSKEY_NAME_MAX) {
    throw validationError(`${field} must be at most ${PASSKEY_NAME_MAX} characters`);
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(name)) {
    throw validationError(`${field} must not contain control characters`);
  }
  return name;
}

/** The name a passkey gets when none is given: when it was added, which the user can tell apart. */
export function defaultPasskeyName(now: number): string {
  return `Passkey added ${toIso(now).slice(0, 10)}`;
}

/**
 * What binds a WebAuthn challenge: the login flow it was issued for (sign-in) or the session
 * that asked to register a passkey. One live challenge per binding: asking again replaces it.
 */
export type ChallengeBinding = { flowId: string } | { sessionId: string };

export interface WebAuthnChallengeRecord {
  /** `flow:<id>` or `session:<id>`: the primary key, so a binding has one challenge at most. */
  binding: string;
  flow_id: string | null;
  session_id: string | null;
  /** SHA-256 of the challenge (base64url); the challenge itself is not kept. */
  challenge_hash: string;
  expires_at: number;
}

export function bindingKey(binding: ChallengeBinding): string {
  return 'flowId' in binding ? `flow:${binding.flowId}` : `session:${binding.sessionId}`;
}
