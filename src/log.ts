import pino, { type DestinationStream, type Logger } from 'pino';
import { OUTBOX_OUTAGE_MESSAGES } from './domain/outbox/outbox-worker.js';
import { RepeatGate } from './lib/repeat-gate.js';
import { OUTAGE_MESSAGES } from './service-log.js';

/** Secrets that must never reach a log line. */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  '*.password',
  '*.token',
  '*.csrf_token',
];

const OUTAGE_SET: ReadonlySet<string> = new Set([
  ...Object.values(OUTAGE_MESSAGES),
  ...Object.values(OUTBOX_OUTAGE_MESSAGES),
]);

export const REPEAT_WINDOW_MS = 60_000;

export interface LoggerOptions {
  level: string;
  /** Where lines go; standard output when absent (tests pass a capturing stream). */
  destination?: DestinationStream;
  repeatWindowMs?: number;
}

/**
 * The process's one logger: JSON lines, errors through pino's err serializer (type,
 * message, code, stack: logs only, never a response), secrets redacted.
 */
export function createLogger({
  level,
  destination,
  repeatWindowMs = REPEAT_WINDOW_MS,
}: LoggerOptions): Logger {
  const gate = new RepeatGate(repeatWindowMs);
  const options: pino.LoggerOptions = {
    level,
    redact: REDACT,
    serializers: { err: pino.stdSerializers.err },
    hooks: {
      logMethod(args, write) {
        const message = typeof args[0] === 'string' ? args[0] : args[1];
        if (typeof message !== 'string' || !OUTAGE_SET.has(message)) {
          return write.apply(this, args);
        }
        // The count goes out on the process logger: it speaks for many requests, not this one.
        const summarize = (held: number) =>
          write.apply(logger, [{ repeated: held, window_ms: repeatWindowMs }, message]);
        if (gate.offer(message, summarize) === 'write') write.apply(this, args);
      },
    },
  };
  const logger = destination === undefined ? pino(options) : pino(options, destination);
  return logger;
}

/**
 * `tessera serve` writes nothing beside its logger: Node's process warnings and a crash
 * become log lines too instead of multi-line text on stderr.
 */
export function routeProcessOutput(logger: Logger): void {
  // Node's default listener prints warnings to stderr; this one replaces it.
  process.removeAllListeners('warning');
  process.on('warning', (warning) => logger.warn({ err: warning }, 'process warning'));
  const crash = (message: string) => (error: unknown) => {
    logger.fatal({ err: error }, message);
    process.exit(1);
  };
  process.on('uncaughtException', crash('uncaught exception'));
  process.on('unhandledRejection', crash('unhandled rejection'));
}
