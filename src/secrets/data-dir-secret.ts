import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';
import { ConfigError } from '../config.js';
import { randomSecret } from '../lib/tokens.js';
import { isPostgresUrl } from '../storage/open.js';

export interface DataDirSecret {
  /** The variable that sets it, named in the error and the warning. */
  variable: string;
  /** Its value from configuration, or null when unset. */
  configured: string | null;
  /** The file in the data directory that holds a generated one. */
  file: string;
  /** What is lost without it, for the warning. */
  loss: string;
}

/**
 * A secret from configuration, or on the embedded default one generated once into the data
 * directory (mode 0600). PostgreSQL deployments run several instances, which must share
 * one value, so there it is required.
 */
export function resolveDataDirSecret(
  config: Config,
  secret: DataDirSecret,
  warn: (message: string) => void,
): string {
  if (secret.configured !== null) return secret.configured;
  if (isPostgresUrl(config.databaseUrl)) {
    throw new ConfigError(
      secret.variable,
      'a secret shared by every instance (required with PostgreSQL)',
      '',
    );
  }
  const file = join(config.dataDir, secret.file);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(config.dataDir, { recursive: true });
  const value = randomSecret();
  try {
    // 'wx' fails if it exists: when the server and a CLI command start together, the
    // first writer wins and the other reads its value instead of overwriting it.
    writeFileSync(file, `${value}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      return readFileSync(file, 'utf8').trim();
    throw error;
  }
  chmodSync(file, 0o600);
  warn(
    `${secret.variable} is unset: generated one into ${file}. Back it up: without it ${secret.loss}.`,
  );
  return value;
}
