import { type Clock, toIso } from '../../lib/clock.js';
import { describeUserAgent } from '../../lib/user-agent.js';
import type { IdentityRecord } from '../identities/identity.js';
import { enqueueMail, isMailAddress } from '../mail/message.js';
import type { OutboxStore } from '../outbox/outbox.js';

/**
 * The security notices (docs/mail.md, "Security notices"), each named as its setting in
 * SERVICE_MAIL_NOTICES names it. `email_changed` is sent by the address change itself
 * (the verification step), which asks `noticeOn` before it queues its mail.
 */
export const NOTICE_KINDS = [
  'password_changed',
  'second_factor_disabled',
  'passkey_added',
  'email_changed',
] as const;
export type NoticeKind = (typeof NOTICE_KINDS)[number];

/** The notices sent from here: each one's template has the kind's name. */
export type IdentityNotice = Exclude<NoticeKind, 'email_changed'>;

/** The kinds that are on (SERVICE_MAIL_NOTICES). */
export type NoticeSettings = ReadonlySet<NoticeKind>;

export function isNoticeKind(name: string): name is NoticeKind {
  return (NOTICE_KINDS as readonly string[]).includes(name);
}

export function noticeOn(settings: NoticeSettings, kind: NoticeKind): boolean {
  return settings.has(kind);
}

/**
 * Where a change came from, when the user made it in their own browser: what the notice
 * tells them so they can tell their own change from someone else's. Absent for an
 * operator, a backend or the CLI: their address and browser say nothing to the user.
 */
export interface NoticeOrigin {
  /** The client's address as the request gave it. */
  address: string | null;
  userAgent: string | null;
  /** The browser's preferred language (the first of Accept-Language); English otherwise. */
  locale: string | null;
}

export interface NoticeDeps {
  clock: Clock;
  notices: NoticeSettings;
}

/** In place of what is not known: the same in every language. */
const UNKNOWN = '—';

/**
 * Queues `kind`'s mail through `tx`, the change's own transaction, so a change that rolls
 * back sends nothing. Nothing is queued when the kind is off or the identity has no
 * verified address: an unverified one may be a stranger's, typed in by mistake or on
 * purpose, and a notice must not mail them about someone else's account. Only what the
 * user already knows goes in (names, the time, their own browser): never a secret.
 */
export async function noticeFor(
  tx: OutboxStore,
  deps: NoticeDeps,
  identity: Pick<IdentityRecord, 'username' | 'display_name' | 'email' | 'email_verified_at'>,
  kind: IdentityNotice,
  origin?: NoticeOrigin,
): Promise<void> {
  if (!noticeOn(deps.notices, kind)) return;
  if (identity.email === null || identity.email_verified_at === null) return;
  // Every stored address passes (email.ts accepts less); should one not, the notice is
  // skipped rather than refusing the security change that causes it.
  if (!isMailAddress(identity.email)) return;
  await enqueueMail(tx, deps.clock, {
    to: identity.email,
    template: kind,
    locale: origin?.locale ?? 'en',
    variables: {
      username: identity.username,
      name: identity.display_name,
      time: noticeTime(deps.clock.now()),
      device: origin ? deviceOf(origin.userAgent) : UNKNOWN,
      address: origin?.address ?? UNKNOWN,
    },
  });
}

/** `2026-11-26 10:57 UTC`: readable in every language, no time zone to guess. */
function noticeTime(at: number): string {
  return `${toIso(at).slice(0, 16).replace('T', ' ')} UTC`;
}

/**
 * `Firefox 132, Windows 10`: only what the parser recognised. The raw User-Agent is whatever
 * the one making the change sent, so it never goes in: a stranger's change must not put
 * words of their choosing into the mail that warns the user of it.
 */
function deviceOf(userAgent: string | null): string {
  const { browser, os } = describeUserAgent(userAgent);
  if (browser && os) return `${browser}, ${os}`;
  return browser ?? os ?? UNKNOWN;
}
