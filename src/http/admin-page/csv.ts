import type { AuditEntry } from '../../domain/audit/audit.js';

const HEADER = [
  'timestamp',
  'action',
  'service_name',
  'service_id',
  'target_identity',
  'outcome',
  'details',
];

/**
 * One CSV cell (RFC 4180), safe to open in a spreadsheet. A cell that starts with `=`, `+`,
 * `-`, `@`, a tab or a carriage return would be read as a formula (OWASP, "CSV Injection"):
 * it gets a leading `'`, which makes it text. Audit values come from anyone who can sign
 * in or call the API (a username, a flow's error), so every cell is treated so.
 */
export function csvCell(value: string | null): string {
  let text = value ?? '';
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The audit export: a header row, then one row per entry, CRLF line ends. */
export function auditCsv(entries: AuditEntry[]): string {
  const rows = entries.map((entry) =>
    [
      entry.timestamp,
      entry.action,
      entry.service_name,
      entry.service_id,
      entry.target_identity,
      entry.outcome,
      JSON.stringify(entry.details),
    ]
      .map(csvCell)
      .join(','),
  );
  return `${[HEADER.join(','), ...rows].join('\r\n')}\r\n`;
}
