import { validationError } from '../domain/errors.js';

/** A whole number as typed (no sign, exponent or hex); anything else is NaN, for the range check. */
export function parseCount(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  return /^[0-9]{1,9}$/.test(raw) ? Number(raw) : NaN;
}

export async function readPasswordFromStdin(passwordStdin: boolean | undefined): Promise<string> {
  if (!passwordStdin) {
    throw validationError('--password-stdin is required: passwords never go in arguments');
  }
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One trailing newline is the terminator of `echo`/a heredoc, not part of the password.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}
