import { CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { DomainError, type ErrorCode } from '../domain/errors.js';
import { StorageTimeout, StorageUnavailable } from '../storage/errors.js';
import { printJson } from './output.js';

/** The API's codes, plus internal_error for a failure nobody anticipated (a bug). */
export type CliErrorCode = ErrorCode | 'internal_error';

/** Exit statuses: 0 done; 2 the input was refused, nothing done; 1 any other failure. */
export const EXIT_FAILED = 1;
export const EXIT_INVALID = 2;

export interface Failure {
  error: CliErrorCode;
  message: string;
  /** The failure's own text (a validation message, the config variable); else only the code is printed. */
  specific: boolean;
}

/** Default text per code, for failures that carry none of their own. */
const TEXT: Partial<Record<CliErrorCode, string>> = {
  not_found: 'not found',
  username_taken: 'username is already taken',
  email_taken: 'email address belongs to another identity',
};

const defaultText = (code: CliErrorCode) => TEXT[code] ?? code.replaceAll('_', ' ');

export function toFailure(error: unknown): Failure {
  if (error instanceof CommanderError) {
    // Commander's own sentence names the option or argument; only its "error: " goes.
    return {
      error: 'validation_error',
      message: error.message.replace(/^error: /, ''),
      specific: true,
    };
  }
  if (error instanceof DomainError) {
    return error.hasClientMessage
      ? { error: error.code, message: error.message, specific: true }
      : { error: error.code, message: defaultText(error.code), specific: false };
  }
  if (error instanceof ConfigError) {
    return { error: 'validation_error', message: error.message, specific: true };
  }
  // Their own text (never the driver's), which may name what was unreachable.
  if (error instanceof StorageUnavailable) {
    return { error: 'unavailable', message: error.message, specific: true };
  }
  if (error instanceof StorageTimeout) {
    return { error: 'timeout', message: error.message, specific: true };
  }
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { error: 'internal_error', message: text.split('\n')[0]!, specific: true };
}

export function exitStatus(failure: Failure): number {
  return failure.error === 'validation_error' ? EXIT_INVALID : EXIT_FAILED;
}

/**
 * With --json the failure is the one JSON document on standard output, like a success;
 * otherwise one line on standard error.
 */
export function reportFailure(failure: Failure, json: boolean): void {
  if (json) {
    const { error, message } = failure;
    return printJson({ error, message });
  }
  const line = failure.specific ? `${failure.error}: ${failure.message}` : failure.error;
  process.stderr.write(`tessera: ${line}\n`);
}
