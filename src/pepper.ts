import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.js';
import { ConfigError } from './config.js';
import { isPostgresUrl } from './storage/open.js';
import { randomSecret } from './lib/tokens.js';

/**
 * SERVICE_PASSWORD_PEPPER, or on the embedded default a pepper generated once into the data
 * directory (mode 0600). PostgreSQL deployments run several instances, which must share one
 * pepper, so there it is required.
 */
export function resolvePepper(config: Config, warn: (message: string) => void): string {
  if (config.passwordPepper !== null) return config.passwordPepper;
  if (isPostgresUrl(config.databaseUrl)) {
    throw new ConfigError(
      'SERVICE_PASSWORD_PEPPER',
      'a secret shared by every instance (required with PostgreSQL)',
      '',
    );
  }
  const file = join(config.dataDir, 'pepper');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(config.dataDir, { recursive: true });
  const pepper = randomSecret();
  try {
    // 'wx' fails if it exists: when the server and a CLI command start together, the
    // first writer wins and the other reads its pepper instead of overwriting it.
    writeFileSync(file, `${pepper}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST')
      return readFileSync(file, 'utf8').trim();
    throw error;
  }
  chmodSync(file, 0o600);
  warn(
    `SERVICE_PASSWORD_PEPPER is unset: generated one into ${file}. Back it up: without it no stored password verifies.`,
  );
  return pepper;
}
