import type { Clock } from '../../lib/clock.js';
import type { RateLimitRule } from '../../lib/rate.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { randomSecret, secretsEqual } from '../../lib/tokens.js';
import { DomainError, notFound } from '../errors.js';
import { consumeRateLimit } from '../rate-limit/rate-limiter.js';
import type { Store } from '../store.js';
import {
  type MailCodePurpose,
  type MailCodeRecord,
  codeContext,
  newCodeSecrets,
  newMailCodeId,
  normaliseCode,
  tokenContext,
} from './mail-code.js';

/** The limits of every mailed code (docs/verification.md, "Limits"). */
export interface MailCodeSettings {
  /** How long a code (and its link) holds after it was sent. */
  ttlMs: number;
  /** Wrong codes after which the code closes (`failed`): a new one must be asked for. */
  maxAttempts: number;
  /** Codes sent (first sends and resends) per identity and purpose. */
  sendRule: RateLimitRule;
}

export const MAIL_CODE_SETTINGS: MailCodeSettings = {
  ttlMs: 15 * 60_000,
  maxAttempts: 5,
  sendRule: { limit: 5, windowMs: 60 * 60_000 },
};

/**
 * How long an expired code's row is kept before the sweep deletes it: its page can still
 * say "expired" and offer a resend for that long, instead of "not found".
 */
export const MAIL_CODE_RETENTION_MS = 24 * 60 * 60_000;

export interface MailCodeDeps {
  store: Store;
  clock: Clock;
  secretBox: Pick<SecretBox, 'mac' | 'verifyMac'>;
}

/** A code just made: the record as stored, and the secrets that go into the mail only. */
export interface IssuedCode {
  record: MailCodeRecord;
  code: string;
  token: string;
}

const sendKey = (purpose: MailCodePurpose, identityId: string) =>
  `mail-code:${purpose}:identity:${identityId}`;

/**
 * Makes a code for `address` through `tx`, the transaction that also queues its mail, so
 * the code exists exactly when its mail will be sent. Counts a send against the
 * identity's limit (a refused change rolls the count back with it) and supersedes the
 * identity's earlier codes of the purpose: only the newest address waits.
 */
export async function issueMailCode(
  deps: MailCodeDeps,
  tx: Store,
  input: { purpose: MailCodePurpose; identityId: string; address: string },
  settings: MailCodeSettings = MAIL_CODE_SETTINGS,
): Promise<IssuedCode> {
  const id = newMailCodeId();
  const { code, token, secrets } = await freshSecrets(deps, tx, id, input, settings);
  await tx.supersedeMailCodes(input.identityId, input.purpose);
  const record: MailCodeRecord = {
    id,
    purpose: input.purpose,
    identity_id: input.identityId,
    address: input.address,
    ...secrets,
    csrf_token: randomSecret(),
    state: 'pending',
    attempts: 0,
    created_at: deps.clock.now(),
    used_at: null,
  };
  await tx.insertMailCode(record);
  return { record, code, token };
}

/**
 * A resend: new secrets and a new expiry on the same pending code, counted against the
 * same per-identity limit as a first send. The wrong attempts stay counted: a resend buys
 * no more guesses.
 */
export async function renewMailCode(
  deps: MailCodeDeps,
  tx: Store,
  record: MailCodeRecord,
  settings: MailCodeSettings = MAIL_CODE_SETTINGS,
): Promise<IssuedCode> {
  const { code, token, secrets } = await freshSecrets(
    deps,
    tx,
    record.id,
    { purpose: record.purpose, identityId: record.identity_id },
    settings,
  );
  if (!(await tx.renewMailCode(record.id, secrets))) throw new DomainError('invalid_token');
  return { record: { ...record, ...secrets }, code, token };
}

/**
 * A send, counted against the identity's limit for the purpose (first sends and resends
 * alike), and the code and link token it mails: only their MACs under the row's id are
 * kept, with the new expiry.
 */
async function freshSecrets(
  deps: MailCodeDeps,
  tx: Store,
  id: string,
  input: { purpose: MailCodePurpose; identityId: string },
  settings: MailCodeSettings,
) {
  await consumeRateLimit(
    tx,
    deps.clock,
    sendKey(input.purpose, input.identityId),
    settings.sendRule,
  );
  const { code, token } = newCodeSecrets();
  const secrets = {
    code_hash: deps.secretBox.mac(codeContext(id), code),
    token_hash: deps.secretBox.mac(tokenContext(id), token),
    expires_at: deps.clock.now() + settings.ttlMs,
  };
  return { code, token, secrets };
}

/** A code by id and purpose; anything else is not found (ids are not secrets, but not guessable). */
export async function findMailCode(
  deps: Pick<MailCodeDeps, 'store'>,
  purpose: MailCodePurpose,
  id: string,
): Promise<MailCodeRecord> {
  const record = id.startsWith('mc_') ? await deps.store.findMailCode(id) : undefined;
  if (!record || record.purpose !== purpose) throw notFound();
  return record;
}

export function isMailCodeOpen(record: MailCodeRecord, now: number): boolean {
  return record.state === 'pending' && record.expires_at > now;
}

/** What the flow shows: the stored state, or `expired` for a pending code past its time. */
export function mailCodeViewState(
  record: MailCodeRecord,
  now: number,
): MailCodeRecord['state'] | 'expired' {
  return record.state === 'pending' && record.expires_at <= now ? 'expired' : record.state;
}

/** The flow token the code's page was given, compared in constant time; else `invalid_token`. */
export function requireFlowToken(record: MailCodeRecord, csrf: unknown): void {
  if (typeof csrf !== 'string' || !secretsEqual(record.csrf_token, csrf)) {
    throw new DomainError('invalid_token');
  }
}

/** The open code whose flow token was presented; else `invalid_token`. */
export function requireOpenCode(record: MailCodeRecord, csrf: unknown, now: number): void {
  requireFlowToken(record, csrf);
  if (!isMailCodeOpen(record, now)) throw new DomainError('invalid_token');
}

/** The proof a submission carries: the typed code, or the link's token. */
export type CodeProof = { code: string } | { token: string };

/** Whether the proof is the code's (or its link's), by a constant-time MAC comparison. */
export function proofMatches(
  deps: Pick<MailCodeDeps, 'secretBox'>,
  record: MailCodeRecord,
  proof: CodeProof,
): boolean {
  return 'token' in proof
    ? deps.secretBox.verifyMac(tokenContext(record.id), proof.token, record.token_hash)
    : deps.secretBox.verifyMac(codeContext(record.id), normaliseCode(proof.code), record.code_hash);
}

/**
 * Checks the proof in constant time (a MAC comparison). A wrong one is counted (one
 * conditional UPDATE, closing the code at the cap) and refused as `invalid_credentials`;
 * when the code closed meanwhile (used by a racing submission, or capped), `invalid_token`.
 */
export async function checkProof(
  deps: MailCodeDeps,
  record: MailCodeRecord,
  proof: CodeProof,
  settings: MailCodeSettings = MAIL_CODE_SETTINGS,
): Promise<void> {
  if (proofMatches(deps, record, proof)) return;
  const counted = await deps.store.countMailCodeAttempt(record.id, settings.maxAttempts);
  throw new DomainError(counted ? 'invalid_credentials' : 'invalid_token');
}
