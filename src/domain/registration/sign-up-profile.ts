import { validationError } from '../errors.js';
import { requireEmail } from '../identities/email.js';
import { requireDisplayName, requireUsername } from '../identities/identity.js';

/** SERVICE_REGISTRATION_EMAIL (docs/registration.md). */
export type RegistrationEmail = 'optional' | 'required' | 'verified';

/** Who a sign-up says the new identity is, checked; no credential. */
export interface SignUpProfile {
  username: string;
  displayName: string;
  /** Canonical; null when none was given (only where the setting allows it). */
  email: string | null;
}

const text = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined;

/**
 * The profile fields of a sign-up (both ways, password and passkey), under the same rules
 * as `POST /v1/register`: the username rule, a display name defaulting to the username, an
 * address required unless the setting is `optional`. An empty field counts as absent, as a
 * form sends it. No I/O.
 */
export function parseSignUpProfile(
  fields: Readonly<Record<string, unknown>>,
  emailSetting: RegistrationEmail,
): SignUpProfile {
  const rawUsername = text(fields.username);
  if (rawUsername === undefined) throw validationError('username is required');
  const username = requireUsername(rawUsername);
  const rawName = text(fields.display_name);
  const displayName = requireDisplayName(rawName ?? username);
  const rawEmail = text(fields.email);
  if (rawEmail === undefined && emailSetting !== 'optional') {
    throw validationError('email is required');
  }
  return { username, displayName, email: rawEmail === undefined ? null : requireEmail(rawEmail) };
}

/** The password of a password sign-up: present, as text; the policy is checked later. */
export function requireSignUpPassword(fields: Readonly<Record<string, unknown>>): string {
  const { password } = fields;
  if (typeof password !== 'string' || password === '') {
    throw validationError('password is required');
  }
  return password;
}
