import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import { DomainError, notFound, validationError } from '../errors.js';
import type { IdentityRecord } from '../identities/identity.js';
import { type NoticeDeps, type NoticeOrigin, noticeFor } from '../notices/notices.js';
import { requireIdentityId } from '../identities/identity.js';
import { type SecondFactorLimitDeps, consumeSecondFactorLimit } from '../sign-in/second-factor.js';
import { openTotpSecret } from '../sign-in/totp/totp-method.js';
import type { Store } from '../store.js';
import { UniqueViolation } from '../unique-violation.js';
import { hashRecoveryCode, newRecoveryCodes } from './recovery-codes.js';
import { type TotpEngine, normalizeTotpCode, totpSecretContext } from './totp.js';

export interface EnrolmentDeps extends SecondFactorLimitDeps {
  store: Store;
  clock: Clock;
  audit: Pick<AuditLog, 'write'>;
  secretBox: SecretBox;
  totp: TotpEngine;
}

/** What an identity has, for its own account page and for operators. */
export interface SecondFactorStatus {
  /** A confirmed authenticator: sign-ins need a code. */
  enabled: boolean;
  /** An enrolment started and not confirmed yet (it signs nothing in). */
  pending: boolean;
  methods: string[];
  /** When the authenticator was confirmed. */
  since: number | null;
  recovery_codes_left: number;
}

export async function secondFactorStatus(
  store: Pick<Store, 'findTotpFactor' | 'listUnusedRecoveryCodes'>,
  identityId: string,
): Promise<SecondFactorStatus> {
  const factor = await store.findTotpFactor(identityId);
  const enabled = factor?.confirmed_at != null;
  const left = enabled ? (await store.listUnusedRecoveryCodes(identityId)).length : 0;
  return {
    enabled,
    pending: factor !== undefined && !enabled,
    methods: enabled ? ['totp'] : [],
    since: enabled ? factor!.confirmed_at : null,
    recovery_codes_left: left,
  };
}

/** A started enrolment: what the user's authenticator app needs, shown once. */
export interface TotpEnrolment {
  secret: string;
  otpauth_uri: string;
}

/**
 * Starts (or restarts) a TOTP enrolment: a fresh secret, sealed at rest, pending until a
 * code confirms it. An identity that already has a confirmed authenticator must disable it
 * first, so a stolen session cannot swap the authenticator silently.
 */
export async function startTotpEnrolment(
  deps: EnrolmentDeps,
  actor: Actor,
  identity: IdentityRecord,
  issuer: string,
): Promise<TotpEnrolment> {
  const secret = deps.totp.newSecret();
  const sealed = deps.secretBox.seal(secret, totpSecretContext(identity.id));
  try {
    await deps.store.transaction(async (tx) => {
      const existing = await tx.findTotpFactor(identity.id);
      if (existing?.confirmed_at != null) {
        throw validationError('two-factor sign-in is already on: turn it off first to replace it');
      }
      if (existing) await tx.deleteTotpFactor(identity.id);
      await tx.insertTotpFactor({
        identity_id: identity.id,
        secret_sealed: sealed,
        confirmed_at: null,
        last_used_step: null,
        created_at: deps.clock.now(),
      });
      await deps.audit.write(tx, actor, {
        action: 'second_factor_enrol',
        target_identity: identity.id,
        details: { method: 'totp' },
      });
    });
  } catch (error) {
    // Two enrolments racing: the other one's secret stands; this one asks to retry.
    if (error instanceof UniqueViolation) {
      throw validationError('another enrolment started meanwhile: reload and try again');
    }
    throw error;
  }
  return {
    secret,
    otpauth_uri: deps.totp.uri({ issuer, account: identity.username, secret }),
  };
}

/**
 * Confirms the pending enrolment with a code from the app, turning two-factor sign-in on,
 * and returns the ten recovery codes: the only time they exist in the clear. The code's
 * time step counts as used, so the same code cannot also sign in.
 */
export async function confirmTotpEnrolment(
  deps: EnrolmentDeps,
  actor: Actor,
  identity: IdentityRecord,
  rawCode: string,
): Promise<string[]> {
  const factor = await deps.store.findTotpFactor(identity.id);
  if (!factor || factor.confirmed_at !== null) {
    throw validationError('no enrolment is waiting for a code: start one first');
  }
  await consumeSecondFactorLimit(deps, identity.id);
  const code = normalizeTotpCode(rawCode);
  const secret = await openTotpSecret(deps, factor);
  const step =
    code === null || secret === null
      ? null
      : await deps.totp.verify(secret, code, deps.clock.now(), null);
  if (step === null) {
    throw validationError(
      'that code is not right: check the app and the phone clock, then try again',
    );
  }
  const codes = newRecoveryCodes();
  await deps.store.transaction(async (tx) => {
    const now = deps.clock.now();
    if (!(await tx.confirmTotpFactor(identity.id, now, step))) {
      throw validationError('no enrolment is waiting for a code: start one first');
    }
    await tx.replaceRecoveryCodes(identity.id, codes.map(hashRecoveryCode), now);
    await deps.audit.write(tx, actor, {
      action: 'second_factor_enable',
      target_identity: identity.id,
      details: { method: 'totp', recovery_codes: codes.length },
    });
  });
  return codes;
}

/** Ten new recovery codes; the old ones stop working. */
export async function regenerateRecoveryCodes(
  deps: EnrolmentDeps,
  actor: Actor,
  identityId: string,
): Promise<string[]> {
  const codes = newRecoveryCodes();
  await deps.store.transaction(async (tx) => {
    const factor = await tx.findTotpFactor(identityId);
    if (factor?.confirmed_at == null) {
      throw validationError('two-factor sign-in is off: there are no recovery codes to replace');
    }
    await tx.replaceRecoveryCodes(identityId, codes.map(hashRecoveryCode), deps.clock.now());
    await deps.audit.write(tx, actor, {
      action: 'recovery_codes_regenerate',
      target_identity: identityId,
      details: { recovery_codes: codes.length },
    });
  });
  return codes;
}

/**
 * Removes the authenticator (pending or confirmed) and every recovery code: the user's own
 * "turn off" (`second_factor_disable`) or an operator's reset for a lost phone
 * (`identity_second_factor_reset`). Idempotent; returns whether two-factor sign-in was on.
 * When it was, the user gets the `second_factor_disabled` notice either way: an operator's
 * reset is exactly the change a user whose account is being taken over must hear of.
 */
export async function removeSecondFactor(
  deps: Pick<EnrolmentDeps, 'store' | 'audit'> & NoticeDeps,
  actor: Actor,
  identityId: string,
  action: 'second_factor_disable' | 'identity_second_factor_reset',
  origin?: NoticeOrigin,
): Promise<boolean> {
  requireIdentityId(identityId);
  return deps.store.transaction(async (tx) => {
    const identity = await tx.findIdentityById(identityId);
    if (!identity) throw notFound();
    const factor = await tx.findTotpFactor(identityId);
    await tx.deleteTotpFactor(identityId);
    const codes = await tx.deleteRecoveryCodes(identityId);
    const wasOn = factor?.confirmed_at != null;
    await deps.audit.write(tx, actor, {
      action,
      target_identity: identityId,
      details: { method: 'totp', was_enabled: wasOn, recovery_codes_removed: codes },
    });
    if (wasOn) await noticeFor(tx, deps, identity, 'second_factor_disabled', origin);
    return wasOn;
  });
}

/** For callers that must refuse an identity that is not `active` (its own account page). */
export function requireActive(identity: IdentityRecord): void {
  if (identity.state !== 'active') throw new DomainError('identity_disabled');
}
