import type { Config } from '../config.js';
import { createSecretBox, type SecretBox } from '../lib/secret-box.js';
import { resolveDataDirSecret } from './data-dir-secret.js';

/**
 * The secret box sealing what Tessera keeps encrypted at rest: SERVICE_ENCRYPTION_KEY (or
 * on SQLite one generated into the data directory), with SERVICE_ENCRYPTION_KEYS_PREVIOUS
 * still opening what they sealed while it is re-sealed under the current key.
 */
export function resolveSecretBox(config: Config, warn: (message: string) => void): SecretBox {
  const current = resolveDataDirSecret(
    config,
    {
      variable: 'SERVICE_ENCRYPTION_KEY',
      configured: config.encryptionKey,
      file: 'encryption-key',
      loss: 'no second factor or signing key can be read',
    },
    warn,
  );
  return createSecretBox(current, config.encryptionKeysPrevious);
}
