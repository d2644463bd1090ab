import { toIso } from '../../lib/clock.js';

export interface LinkRecord {
  provider: string;
  subject: string;
  identity_id: string;
  verified_at: number | null;
  linked_at: number;
}

/** The public Link object of SPEC.md 2.2. */
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
