import type { Config } from '../config.js';
import { resolveDataDirSecret } from './data-dir-secret.js';

/** SERVICE_PASSWORD_PEPPER, or the one generated into the data directory (SQLite only). */
export function resolvePepper(config: Config, warn: (message: string) => void): string {
  return resolveDataDirSecret(
    config,
    {
      variable: 'SERVICE_PASSWORD_PEPPER',
      configured: config.passwordPepper,
      file: 'pepper',
      loss: 'no stored password verifies',
    },
    warn,
  );
}
