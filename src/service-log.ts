/*
 * What the services say through their log, apart from log.ts: the CLI logs to stderr and
 * never loads pino (about 20 ms of every start).
 */

/**
 * Lines written once per pooled connection, audit flush or request while the database is
 * away. They go through a RepeatGate: the first is written, the identical ones that follow
 * are counted, and one line per window says how many were held back (`repeated`).
 */
export const OUTAGE_MESSAGES = {
  connectionLost: 'database connection lost',
  auditUnwritten: 'audit rows could not be written',
  lastUseUnwritten: 'session last use could not be recorded',
  unavailable: 'database unavailable',
  timeout: 'database timeout',
} as const;

/** What the composition root logs: the server hands it its pino logger, the CLI stderr lines. */
export interface ServiceLog {
  warn(message: string): void;
  error(object: { err: unknown; [field: string]: unknown }, message: string): void;
}
