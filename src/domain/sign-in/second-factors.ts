import { validationError } from '../errors.js';
import type { Store } from '../store.js';
import {
  recoveryCodeMethod,
  type RecoveryCodeMethodDeps,
} from './recovery-code/recovery-code-method.js';
import type { SecondFactorMethod } from './second-factor.js';
import { totpMethod, type TotpMethodDeps } from './totp/totp-method.js';

/**
 * Every second-factor method. The flow routes (`POST /v1/flows/{id}/<id>`), the browser
 * CORS zone and the direct sign-in's optional fields are built from this list.
 */
export const SECOND_FACTOR_METHODS = [totpMethod, recoveryCodeMethod] as const;

export type SecondFactorMethodId = (typeof SECOND_FACTOR_METHODS)[number]['id'];

/** What the composition root provides so that every second factor can verify. */
export type SecondFactorMethodDeps = TotpMethodDeps & RecoveryCodeMethodDeps;

export type AnySecondFactorMethod = SecondFactorMethod<
  SecondFactorMethodId,
  unknown,
  SecondFactorMethodDeps
>;

/**
 * The second factors that can complete a sign-in of this identity, none when it has no
 * confirmed authenticator (it then signs in with its first factor alone, as before). The
 * recovery codes belong to the authenticator: they are offered whenever it is.
 */
export async function enrolledSecondFactors(
  store: Pick<Store, 'findTotpFactor'>,
  identityId: string,
): Promise<SecondFactorMethodId[]> {
  const factor = await store.findTotpFactor(identityId);
  return factor?.confirmed_at == null ? [] : [totpMethod.id, recoveryCodeMethod.id];
}

/**
 * The body fields by which a service's direct sign-in (`POST /v1/authenticate/password`)
 * carries a second factor beside the password, and the method each one feeds.
 */
export const DIRECT_SECOND_FACTOR_FIELDS = {
  totp_code: { method: totpMethod, field: 'code' },
  recovery_code: { method: recoveryCodeMethod, field: 'recovery_code' },
} as const satisfies Record<string, { method: AnySecondFactorMethod; field: string }>;

export type DirectSecondFactorFields = {
  [K in keyof typeof DIRECT_SECOND_FACTOR_FIELDS]?: string;
};

/** The one second factor a direct sign-in's body carries, null if none; two is 422. */
export function directSecondFactor(
  fields: DirectSecondFactorFields,
): { method: AnySecondFactorMethod; input: unknown } | null {
  const given = Object.entries(DIRECT_SECOND_FACTOR_FIELDS).filter(
    ([name]) => fields[name as keyof DirectSecondFactorFields] !== undefined,
  );
  if (given.length === 0) return null;
  if (given.length > 1) throw validationError('send one of totp_code and recovery_code, not both');
  const [name, { method, field }] = given[0]!;
  const value = fields[name as keyof DirectSecondFactorFields];
  return { method, input: method.parse({ [field]: value }) };
}
