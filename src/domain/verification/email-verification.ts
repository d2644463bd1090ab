import type { Actor } from '../audit/audit-log.js';
import type { AuditLog } from '../audit/audit-log.js';
import { DomainError, notFound, validationError } from '../errors.js';
import { requireEmail } from '../identities/email.js';
import { type EmailChange, setIdentityEmail } from '../identities/identity-email.js';
import type { IdentityDeps } from '../identities/identity-service.js';
import { type Identity, toIdentity } from '../identities/identity.js';
import { enqueueMail } from '../mail/message.js';
import { type NoticeSettings, noticeOn } from '../notices/notices.js';
import type { MailCodeRecord } from '../mail-codes/mail-code.js';
import {
  type CodeProof,
  type IssuedCode,
  type MailCodeDeps,
  checkProof,
  findMailCode,
  issueMailCode,
  renewMailCode,
  requireFlowToken,
  requireOpenCode,
} from '../mail-codes/mail-codes.js';
import type { Store } from '../store.js';
import { UniqueViolation } from '../unique-violation.js';

export interface VerificationDeps extends MailCodeDeps {
  audit: AuditLog;
  /** SERVICE_MAIL_NOTICES: whether the old address is told (`email_changed`). */
  notices: NoticeSettings;
  /** Builds the mail's link to `GET /v1/verification` from the code's id and token. */
  linkTo(id: string, token: string): string;
}

/** What a started verification hands back: no secret but the flow's CSRF token. */
export interface PendingVerification {
  record: MailCodeRecord;
}

/**
 * Queues the verification mail of `issued` through `tx` (docs/verification.md). Its
 * `email_verification` template carries the code and the link.
 */
async function mailCode(
  deps: VerificationDeps,
  tx: Store,
  issued: IssuedCode,
  locale: string | undefined,
): Promise<void> {
  await enqueueMail(tx, deps.clock, {
    to: issued.record.address,
    template: 'email_verification',
    ...(locale === undefined ? {} : { locale }),
    variables: { code: issued.code, link: deps.linkTo(issued.record.id, issued.token) },
  });
}

/**
 * Starts the verification of `rawEmail` for the identity: the address waits (the code's
 * row) and the identity's own address stays as it is until the code is used. Callable
 * inside a larger transaction (a sign-up, later), hence `tx`.
 *
 * An address another identity holds is `email_taken` now, and again at verification (the
 * UNIQUE index decides a race). The identity's own address, already verified, is nothing
 * to verify: `validation_error`.
 */
export async function startEmailVerification(
  deps: VerificationDeps,
  tx: Store,
  actor: Actor,
  input: { identityId: string; email: string; locale?: string },
): Promise<PendingVerification> {
  const address = requireEmail(input.email);
  const identity = await tx.findIdentityById(input.identityId);
  if (!identity) throw notFound();
  if (identity.email === address && identity.email_verified_at !== null) {
    throw validationError('email is already this account’s verified address');
  }
  const holder = await tx.findIdentityByEmail(address);
  if (holder && holder.id !== identity.id) throw new DomainError('email_taken');
  const issued = await issueMailCode(deps, tx, {
    purpose: 'verification',
    identityId: identity.id,
    address,
  });
  await mailCode(deps, tx, issued, input.locale);
  await deps.audit.write(tx, actor, {
    action: 'email_verification_started',
    target_identity: identity.id,
    // Whether, not what: the address itself stays out of the audit trail.
    details: { email: identity.email === address ? 'same' : 'changed' },
  });
  return { record: issued.record };
}

/** A new code for a pending verification, mailed again; limited like a first send. */
export async function resendVerification(
  deps: VerificationDeps,
  input: { id: string; csrfToken: unknown; locale?: string },
): Promise<MailCodeRecord> {
  const record = await findMailCode(deps, 'verification', input.id);
  // An expired code may be renewed (that is what a resend is for); a used, superseded or
  // capped one may not.
  requireFlowToken(record, input.csrfToken);
  if (record.state !== 'pending') throw new DomainError('invalid_token');
  return deps.store.transaction(async (tx) => {
    const issued = await renewMailCode(deps, tx, record);
    await mailCode(deps, tx, issued, input.locale);
    return issued.record;
  });
}

/**
 * `POST /v1/verification/{id}`: the code (or the link's token) proves the address. Checks
 * the flow token, then the proof (a wrong one counted, capped); then, in one transaction,
 * uses the code (a conditional UPDATE: of racing right submissions exactly one gets
 * through) and makes the address the identity's, verified. The old address, if another,
 * is told. A used code rolls back with a refused change (`email_taken`), so the user may
 * try again once the address is free.
 */
export async function completeEmailVerification(
  deps: VerificationDeps,
  actor: Actor,
  input: { id: string; csrfToken: unknown; proof: CodeProof; locale?: string },
): Promise<Identity> {
  const record = await findMailCode(deps, 'verification', input.id);
  requireOpenCode(record, input.csrfToken, deps.clock.now());
  await checkProof(deps, record, input.proof);
  try {
    return await deps.store.transaction(async (tx) => {
      const now = deps.clock.now();
      if (!(await tx.useMailCode(record.id, now))) throw new DomainError('invalid_token');
      const identity = await tx.findIdentityById(record.identity_id);
      if (!identity) throw notFound();
      const verifiedAt =
        identity.email === record.address && identity.email_verified_at !== null
          ? identity.email_verified_at
          : now;
      const updated = await tx.setIdentityEmail(identity.id, record.address, verifiedAt, now);
      if (!updated) throw notFound();
      // The old address is told, as every security notice is sent: only when it was
      // verified (an unverified one may be a stranger's) and the notice is on.
      const tellOld =
        identity.email !== null &&
        identity.email !== record.address &&
        identity.email_verified_at !== null &&
        noticeOn(deps.notices, 'email_changed');
      if (tellOld) {
        await enqueueMail(tx, deps.clock, {
          to: identity.email!,
          template: 'email_changed',
          ...(input.locale === undefined ? {} : { locale: input.locale }),
          variables: { username: identity.username, address: record.address },
        });
      }
      await deps.audit.write(tx, actor, {
        action: 'email_verified',
        target_identity: identity.id,
        details: { email: identity.email === record.address ? 'same' : 'changed' },
      });
      return toIdentity(updated);
    });
  } catch (error) {
    if (error instanceof UniqueViolation) throw new DomainError('email_taken');
    throw error;
  }
}

/**
 * `PUT /v1/identities/{id}/email` with `send_verification: true`: the backend's change as
 * without it, and, when the address is left unverified, a verification mail for it, in the
 * same transaction (docs/api.md, "Email addresses"). The identity already holds the
 * address, so using the code only marks it verified.
 */
export async function setEmailAndSendVerification(
  deps: VerificationDeps & IdentityDeps,
  actor: Actor,
  idOrUsername: string,
  change: EmailChange,
): Promise<Identity> {
  if (change.email === null || change.verified === true) {
    throw validationError('send_verification needs an email and verified not true');
  }
  return deps.store.transaction(async (tx) => {
    const identity = await setIdentityEmail({ ...deps, store: tx }, actor, idOrUsername, change);
    if (!identity.email_verified && identity.email !== null) {
      await startEmailVerification(deps, tx, actor, {
        identityId: identity.id,
        email: identity.email,
      });
    }
    return identity;
  });
}
