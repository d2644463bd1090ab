import { toIso } from '../../lib/clock.js';

export interface AuditRecord {
  id: string;
  at: number;
  action: string;
  service_name: string | null;
  service_id: string | null;
  target_identity: string | null;
  /** `ok`, or the error code the request was answered with. */
  outcome: string;
  details: string;
}

export interface AuditEntry {
  action: string;
  service_name: string | null;
  service_id: string | null;
  target_identity: string | null;
  timestamp: string;
  outcome: string;
  details: Record<string, unknown>;
}

export function toAuditEntry(record: AuditRecord): AuditEntry {
  return {
    action: record.action,
    service_name: record.service_name,
    service_id: record.service_id,
    target_identity: record.target_identity,
    timestamp: toIso(record.at),
    outcome: record.outcome,
    details: JSON.parse(record.details) as Record<string, unknown>,
  };
}

/** Every given condition must hold; an absent or empty one does not filter. */
export interface AuditFilter {
  /** Any of these actions. */
  actions?: string[];
  target_identity?: string;
  /** Epoch ms, inclusive. */
  since?: number;
  /** Epoch ms, exclusive. */
  until?: number;
}

export interface AuditStore {
  insertAuditRecords(records: AuditRecord[]): Promise<void>;
  /** Newest first (`at`, then id), at most `limit` rows. */
  listAuditRecords(limit: number, filter?: AuditFilter): Promise<AuditRecord[]>;
}
