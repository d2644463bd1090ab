import type { Clock } from '../../lib/clock.js';
import type { RateLimitRule } from '../../lib/rate.js';
import { randomSecret, secretsEqual } from '../../lib/tokens.js';
import type { Actor, AuditLog } from '../audit/audit-log.js';
import { DomainError, notFound, validationError } from '../errors.js';
import { requireEmail } from '../identities/email.js';
import type { IdentityRecord } from '../identities/identity.js';
import { enqueueMail } from '../mail/message.js';
import {
  type IssuedCode,
  MAIL_CODE_SETTINGS,
  type MailCodeDeps,
  issueMailCode,
} from '../mail-codes/mail-codes.js';
import { consumeRateLimit } from '../rate-limit/rate-limiter.js';
import type { Store } from '../store.js';
import { type RecoveryFlowRecord, newRecoveryFlowId } from './recovery-flow.js';

export interface RecoveryDeps extends MailCodeDeps {
  audit: AuditLog;
  /** Builds the mail's link to `GET /v1/recovery` from the flow's id and the code's token. */
  linkTo(flowId: string, token: string): string;
}

/**
 * Recovery mails asked for one address (known to Tessera or not: the count is the same),
 * first sends and resends together. Beside it the mailed code's own per-identity limit
 * (mail-codes.ts) and the client address's submission limit hold.
 */
export const RECOVERY_ADDRESS_RULE: RateLimitRule = { limit: 5, windowMs: 60 * 60_000 };

/** `GET /v1/recovery` without a flow: a new one, waiting for an address. */
export async function startRecoveryFlow(
  deps: { store: Pick<Store, 'insertRecoveryFlow' | 'hitRateLimit'>; clock: Clock },
  input: { returnTo: string | null; ttlMs: number; createKey: string; createRule: RateLimitRule },
): Promise<RecoveryFlowRecord> {
  await consumeRateLimit(deps.store, deps.clock, input.createKey, input.createRule);
  const now = deps.clock.now();
  const flow: RecoveryFlowRecord = {
    id: newRecoveryFlowId(),
    csrf_token: randomSecret(),
    return_to: input.returnTo,
    state: 'created',
    address: null,
    mail_code_id: null,
    attempts: 0,
    created_at: now,
    expires_at: now + input.ttlMs,
  };
  await deps.store.insertRecoveryFlow(flow);
  return flow;
}

/** A flow by id; anything else is not found (ids are not secrets, but not guessable). */
export async function findRecoveryFlow(
  store: Pick<Store, 'findRecoveryFlow'>,
  id: string,
): Promise<RecoveryFlowRecord> {
  const flow = id.startsWith('rf_') ? await store.findRecoveryFlow(id) : undefined;
  if (!flow) throw notFound();
  return flow;
}

/** The flow token the page was given, compared in constant time; else `invalid_token`. */
export function requireRecoveryCsrf(flow: RecoveryFlowRecord, csrf: unknown): void {
  if (typeof csrf !== 'string' || !secretsEqual(flow.csrf_token, csrf)) {
    throw new DomainError('invalid_token');
  }
}

/**
 * Only an identity's verified address receives a recovery mail: an unverified one may be a
 * stranger's (typed by mistake, or on purpose to take the account over by mail). A disabled
 * identity gets none either: its recovery would be refused.
 */
function recipientOf(identity: IdentityRecord | undefined, address: string) {
  return identity &&
    identity.email === address &&
    identity.email_verified_at !== null &&
    identity.state === 'active'
    ? identity
    : undefined;
}

/** Queues the `recovery_code` mail of `issued` for `flowId` through `tx`. */
async function mailCode(
  deps: RecoveryDeps,
  tx: Store,
  flowId: string,
  issued: IssuedCode,
  locale: string | undefined,
): Promise<void> {
  await enqueueMail(tx, deps.clock, {
    to: issued.record.address,
    template: 'recovery_code',
    ...(locale === undefined ? {} : { locale }),
    variables: { code: issued.code, link: deps.linkTo(flowId, issued.token) },
  });
}

/**
 * `POST /v1/recovery/{id}/email` (and its resend): a code for `rawEmail` if it is an
 * identity's verified address, nothing otherwise; the flow moves to `sent` either way and
 * the answer is the flow, identical in both cases (docs/recovery.md, "No enumeration").
 *
 * The two cases also do the same database work, so that their timing does not tell them
 * apart: the known address writes the code and the mail (two rows, after a counter and an
 * UPDATE), the unknown one a counter, the same UPDATE matching nothing, and two counter
 * rows in place of the code's and the mail's. A code held back by the identity's own send
 * limit (an operator sent five this hour) is likewise not said: the address's limit, the
 * same for everyone, is the one a requester sees.
 */
export async function requestRecoveryMail(
  deps: RecoveryDeps,
  actor: Actor,
  input: { flowId: string; csrfToken: unknown; email: string | null; locale?: string },
): Promise<RecoveryFlowRecord> {
  const flow = await findRecoveryFlow(deps.store, input.flowId);
  requireRecoveryCsrf(flow, input.csrfToken);
  const now = deps.clock.now();
  if ((flow.state !== 'created' && flow.state !== 'sent') || flow.expires_at <= now) {
    throw new DomainError('invalid_token');
  }
  const raw = input.email ?? flow.address;
  if (raw === null || raw.trim() === '') throw validationError('email is required');
  const address = requireEmail(raw);
  await consumeRateLimit(
    deps.store,
    deps.clock,
    `recovery:address:${address}`,
    RECOVERY_ADDRESS_RULE,
  );
  return deps.store.transaction(async (tx) => {
    const identity = recipientOf(await tx.findIdentityByEmail(address), address);
    let issued: IssuedCode | null = null;
    if (identity) {
      issued = await issueQuietly(deps, tx, identity.id, address);
      if (issued) await mailCode(deps, tx, flow.id, issued, input.locale);
    } else {
      await sameWorkAsACode(tx, deps.clock, address);
    }
    const sent = {
      address,
      mail_code_id: issued?.record.id ?? null,
      expires_at: deps.clock.now() + MAIL_CODE_SETTINGS.ttlMs,
    };
    if (!(await tx.markRecoverySent(flow.id, sent, now))) throw new DomainError('invalid_token');
    await deps.audit.write(tx, actor, {
      action: 'recovery_requested',
      target_identity: identity?.id ?? null,
      // Whether a mail went, never the address: the audit trail names no stranger's address.
      details: { flow_id: flow.id, mailed: issued !== null },
    });
    return { ...flow, ...sent, state: 'sent' as const };
  });
}

/** A code, or null when the identity's own send limit holds it back (see above). */
async function issueQuietly(
  deps: RecoveryDeps,
  tx: Store,
  identityId: string,
  address: string,
): Promise<IssuedCode | null> {
  try {
    return await issueMailCode(deps, tx, { purpose: 'recovery', identityId, address });
  } catch (error) {
    if (error instanceof DomainError && error.code === 'rate_limited') return null;
    throw error;
  }
}

/** The statements issueMailCode and enqueueMail run, on rows that name no one. */
async function sameWorkAsACode(tx: Store, clock: Clock, address: string): Promise<void> {
  const now = clock.now();
  const window = MAIL_CODE_SETTINGS.sendRule.windowMs;
  await tx.hitRateLimit(`mail-code:recovery:address:${address}`, window, now);
  await tx.supersedeMailCodes(`none:${address}`, 'recovery');
  await tx.hitRateLimit(`recovery:unknown:code:${randomSecret()}`, window, now);
  await tx.hitRateLimit(`recovery:unknown:mail:${randomSecret()}`, window, now);
}

/**
 * The console's "Send a recovery mail" (docs/admin.md): the same mail to the identity's
 * verified address, on a flow of its own already `sent`, so its link opens the same page.
 * Refused (422) when the identity has no verified address.
 */
export async function sendRecoveryMail(
  deps: RecoveryDeps,
  actor: Actor,
  identityId: string,
  ttlMs: number,
): Promise<void> {
  const identity = await deps.store.findIdentityById(identityId);
  if (!identity) throw notFound();
  if (identity.email === null || identity.email_verified_at === null) {
    throw validationError('the identity has no verified email address to send a recovery mail to');
  }
  if (identity.state !== 'active') {
    throw validationError('the identity is disabled: enable it before sending a recovery mail');
  }
  const address = identity.email;
  await deps.store.transaction(async (tx) => {
    const issued = await issueMailCode(deps, tx, {
      purpose: 'recovery',
      identityId: identity.id,
      address,
    });
    const now = deps.clock.now();
    const flow: RecoveryFlowRecord = {
      id: newRecoveryFlowId(),
      csrf_token: randomSecret(),
      return_to: null,
      state: 'sent',
      address,
      mail_code_id: issued.record.id,
      attempts: 0,
      created_at: now,
      expires_at: now + Math.max(ttlMs, MAIL_CODE_SETTINGS.ttlMs),
    };
    await tx.insertRecoveryFlow(flow);
    await mailCode(deps, tx, flow.id, issued, undefined);
    await deps.audit.write(tx, actor, {
      action: 'recovery_mail_sent',
      target_identity: identity.id,
      details: { flow_id: flow.id },
    });
  });
}
