import { toIso } from '../../lib/clock.js';
import { validationError } from '../errors.js';
import { requireText } from '../text.js';

export interface LinkRecord {
  provider: string;
  subject: string;
  identity_id: string;
  verified_at: number | null;
  linked_at: number;
}

/** The public Link object of docs/api.md 2.2. */
export interface Link {
  provider: string;
  subject: string;
  identity_id: string;
  verified_at: string | null;
  linked_at: string;
}

export function toLink(record: LinkRecord): Link {
  return {
    provider: record.provider,
    subject: record.subject,
    identity_id: record.identity_id,
    verified_at: record.verified_at === null ? null : toIso(record.verified_at),
    linked_at: toIso(record.linked_at),
  };
}

/** A (provider, subject) pair as the caller sent it: opaque, never normalised or parsed. */
export interface LinkKey {
  provider: string;
  subject: string;
}

export const LINK_KEY_MAX_BYTES = 255;

/**
 * docs/api.md 2.2 counts bytes of UTF-8, not characters: 85 x "€" fits, 86 do not. Opaque text
 * (domain/text.ts): a lone surrogate would be stored as U+FFFD and silently match a
 * different subject, and PostgreSQL text cannot hold U+0000.
 */
export function requireLinkKeyPart(field: keyof LinkKey, value: string): string {
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes < 1 || bytes > LINK_KEY_MAX_BYTES) {
    throw validationError(
      `${field} must be 1-${LINK_KEY_MAX_BYTES} bytes of UTF-8 (it is ${bytes} bytes)`,
    );
  }
  return requireText(field, value, 'opaque');
}

export function requireLinkKey(input: LinkKey): LinkKey {
  return {
    provider: requireLinkKeyPart('provider', input.provider),
    subject: requireLinkKeyPart('subject', input.subject),
  };
}

/**
 * What a use case learned before it refused, for the audit row of the refusal (written
 * by the adapter, since the refused transaction wrote nothing). Successful calls audit
 * themselves inside their transaction.
 */
export interface AuditNotes {
  target: string | null;
  details: Record<string, unknown>;
}

export function noteKey(notes: AuditNotes, key: LinkKey): void {
  notes.details.provider = key.provider;
  notes.details.subject = key.subject;
}
