import type { Actor } from '../audit/audit-log.js';
import { DomainError } from '../errors.js';
import type { IdentityRecord } from '../identities/identity.js';
import type { MailCodeRecord } from '../mail-codes/mail-code.js';
import { codeContext, normaliseCode, tokenContext } from '../mail-codes/mail-code.js';
import { type CodeProof, MAIL_CODE_SETTINGS, isMailCodeOpen } from '../mail-codes/mail-codes.js';
import type { NoticeOrigin, NoticeSettings } from '../notices/notices.js';
import { type PasswordPolicy, requirePasswordPolicy } from '../password-policy/policy.js';
import type { PasswordHasher } from '../passwords/password-hasher.js';
import { writePasswordChange } from '../passwords/set-password.js';
import { RECOVERY_SIGN_IN, type MintedSession, type SessionDevice } from '../sessions/session.js';
import { type CompleteSignInDeps, completeSignIn } from '../sign-in/complete-sign-in.js';
import type { Redemption } from '../sign-in/method.js';
import {
  SECOND_FACTOR_REQUIRED,
  type SecondFactorLimitDeps,
  consumeSecondFactorLimit,
} from '../sign-in/second-factor.js';
import {
  type AnySecondFactorMethod,
  type SecondFactorMethodDeps,
  type SecondFactorMethodId,
  enrolledSecondFactors,
} from '../sign-in/second-factors.js';
import type { RecoveryFlowRecord } from './recovery-flow.js';
import { type RecoveryDeps, findRecoveryFlow, requireRecoveryCsrf } from './request-recovery.js';

/** What a right code opens: whose account, and which second factors it still asks for. */
export interface AcceptedCode {
  flow: RecoveryFlowRecord;
  code: MailCodeRecord;
  identity: IdentityRecord;
  secondFactors: SecondFactorMethodId[];
}

/**
 * The MAC a proof is compared with when the flow has no code (the address was no one's):
 * a comparison of the same cost that never matches, so a wrong code takes as long either way.
 */
const NO_CODE = 'no-code';

/**
 * `POST /v1/recovery/{id}/code`, and the first step of completing: the flow is `sent` and
 * unexpired, its CSRF token right, and the proof (the typed code or the link's token)
 * matches the code mailed for it. A wrong proof is counted on the flow, which closes
 * (`failed`) at the mailed codes' cap, whether or not a code was ever sent: an address
 * that is no one's answers exactly like a known one (`invalid_credentials`, then
 * `invalid_token`). Spends nothing.
 */
export async function acceptRecoveryCode(
  deps: Pick<RecoveryDeps, 'store' | 'clock' | 'secretBox'>,
  input: { flowId: string; csrfToken: unknown; proof: CodeProof },
): Promise<AcceptedCode> {
  const flow = await findRecoveryFlow(deps.store, input.flowId);
  requireRecoveryCsrf(flow, input.csrfToken);
  const now = deps.clock.now();
  if (flow.state !== 'sent' || flow.expires_at <= now) throw new DomainError('invalid_token');
  const code = await deps.store.findMailCode(flow.mail_code_id ?? `none:${flow.id}`);
  const id = code?.id ?? flow.id;
  const right =
    'token' in input.proof
      ? deps.secretBox.verifyMac(tokenContext(id), input.proof.token, code?.token_hash ?? NO_CODE)
      : deps.secretBox.verifyMac(
          codeContext(id),
          normaliseCode(input.proof.code),
          code?.code_hash ?? NO_CODE,
        );
  if (!right || !code || code.purpose !== 'recovery') {
    const counted = await deps.store.countRecoveryAttempt(flow.id, MAIL_CODE_SETTINGS.maxAttempts);
    throw new DomainError(counted ? 'invalid_credentials' : 'invalid_token');
  }
  // Superseded by a newer recovery mail, or the address is no longer the identity's
  // verified one: the code proves nothing about the account any more.
  const identity = await deps.store.findIdentityById(code.identity_id);
  if (
    !isMailCodeOpen(code, now) ||
    !identity ||
    identity.email !== code.address ||
    identity.email_verified_at === null
  ) {
    throw new DomainError('invalid_token');
  }
  const secondFactors = await enrolledSecondFactors(deps.store, identity.id);
  return { flow, code, identity, secondFactors };
}

export type CompleteRecoveryDeps = RecoveryDeps &
  CompleteSignInDeps &
  SecondFactorLimitDeps &
  SecondFactorMethodDeps & {
    hasher: PasswordHasher;
    passwordPolicy: PasswordPolicy;
    notices: NoticeSettings;
  };

export interface RecoveryCompletion {
  flow: RecoveryFlowRecord;
  minted: MintedSession;
}

/**
 * `POST /v1/recovery/{id}`: the code (or the link's token), a new password and, when the
 * identity has a second factor, that factor (a TOTP code or a recovery code): a mailbox
 * alone never gets past two-factor. Then, in one transaction: the code is spent (a
 * conditional UPDATE: of racing submissions exactly one gets through), the flow completed,
 * the second factor's code spent, the password set as any password change is (audited,
 * `password.changed`, the notice), every session of the identity revoked, and a new one
 * minted through completeSignIn (`authenticated_via: recovery`, `aal2` when a second
 * factor was proven). Anything refused rolls all of it back.
 */
export async function completeRecovery(
  deps: CompleteRecoveryDeps,
  actor: Actor,
  input: {
    flowId: string;
    csrfToken: unknown;
    proof: CodeProof;
    password: string;
    secondFactor: { method: AnySecondFactorMethod; input: unknown } | null;
    device: SessionDevice;
    origin?: NoticeOrigin;
    /** Filled once the code was accepted: a page may then show the password step again. */
    notes?: { accepted?: AcceptedCode };
  },
): Promise<RecoveryCompletion> {
  const accepted = await acceptRecoveryCode(deps, input);
  if (input.notes) input.notes.accepted = accepted;
  const { flow, code, identity } = accepted;
  if (identity.state !== 'active') throw new DomainError('identity_disabled');
  const redeem: Redemption[] = [];
  if (accepted.secondFactors.length > 0) {
    const given = input.secondFactor;
    if (!given || !accepted.secondFactors.includes(given.method.id)) {
      throw new DomainError('forbidden', SECOND_FACTOR_REQUIRED);
    }
    await consumeSecondFactorLimit(deps, identity.id);
    const outcome = await given.method.verify(deps, identity, given.input);
    if ('failure' in outcome) {
      const counted = await deps.store.countRecoveryAttempt(
        flow.id,
        MAIL_CODE_SETTINGS.maxAttempts,
      );
      throw new DomainError(counted ? 'invalid_credentials' : 'invalid_token');
    }
    redeem.push(outcome.redeem);
  }
  await requirePasswordPolicy(deps.passwordPolicy, input.password, {
    username: identity.username,
    displayName: identity.display_name,
  });
  // Hashed before the transaction: argon2 must never hold a database lock.
  const passwordHash = await deps.hasher.hash(input.password);
  const minted = await deps.store.transaction(async (tx) => {
    const now = deps.clock.now();
    if (!(await tx.useMailCode(code.id, now))) throw new DomainError('invalid_token');
    if (!(await tx.completeRecoveryFlow(flow.id, now))) throw new DomainError('invalid_token');
    const change = await writePasswordChange(
      { ...deps, store: tx },
      actor,
      identity.id,
      passwordHash,
      input.origin === undefined ? {} : { origin: input.origin },
    );
    const current = (await tx.findIdentityById(identity.id)) ?? identity;
    return completeSignIn(
      deps,
      tx,
      current,
      {
        id: RECOVERY_SIGN_IN,
        assurance: redeem.length > 0 ? 'aal2' : 'aal1',
        redeem,
      },
      {
        actor,
        action: 'login',
        details: {
          sign_in_method: RECOVERY_SIGN_IN,
          flow_id: flow.id,
          revoked_sessions: change.revoked_sessions,
        },
      },
      input.device,
    );
  });
  return { flow, minted };
}
