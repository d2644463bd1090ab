import { createLogger } from '../../src/log.js';

export type LogLine = Record<string, unknown> & { level: number; msg: string; reqId?: string };

/** The process logger writing into an array: a line that is not JSON throws where it is logged. */
export function captureLog(options: { level?: string; repeatWindowMs?: number } = {}) {
  const lines: LogLine[] = [];
  const logger = createLogger({
    level: options.level ?? 'info',
    repeatWindowMs: options.repeatWindowMs,
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  });
  return {
    logger,
    lines,
    withMessage: (msg: string) => lines.filter((line) => line.msg === msg),
  };
}
