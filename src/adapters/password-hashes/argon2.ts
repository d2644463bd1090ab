import { parseOptions, verify } from '@node-rs/argon2';
import { IMPORT_BOUNDS } from './bounds.js';
import type { Format, FormatReading } from './foreign-hash.js';

/** A PHC string of argon2id or argon2i: `$argon2id$v=19$m=…,t=…,p=…$<salt>$<hash>`. */
const PHC =
  /^\$argon2(id|i)\$(?:v=(?:16|19)\$)?m=[0-9]+,t=[0-9]+,p=[0-9]+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/;

/**
 * Checks an argon2 PHC string against the bounds. Returns the variant (`argon2id`,
 * `argon2i`) or why it is refused. argon2d (no side-channel resistance, not meant for
 * passwords) and PHC extras (keyid, data) are refused.
 */
export function checkArgon2(hash: string): { variant: string } | string {
  const match = PHC.exec(hash);
  if (!match) {
    return hash.startsWith('$argon2d$')
      ? 'argon2d hashes are not accepted (only argon2id and argon2i)'
      : 'argon2 hash is malformed';
  }
  let options: ReturnType<typeof parseOptions>;
  try {
    options = parseOptions(hash);
  } catch {
    return 'argon2 hash is malformed';
  }
  const { memoryCost: m, timeCost: t, parallelism: p } = options;
  if (m > IMPORT_BOUNDS.argon2MemoryKib) {
    return `argon2 memory m=${m} KiB is above the import bound of ${IMPORT_BOUNDS.argon2MemoryKib} KiB`;
  }
  if (m * t > IMPORT_BOUNDS.argon2WorkKib) {
    return `argon2 work m·t = ${m * t} KiB is above the import bound of ${IMPORT_BOUNDS.argon2WorkKib} KiB`;
  }
  if (p > IMPORT_BOUNDS.argon2Lanes) {
    return `argon2 parallelism p=${p} is above the import bound of ${IMPORT_BOUNDS.argon2Lanes}`;
  }
  return { variant: `argon2${match[1]}` };
}

function readArgon2(hash: string): FormatReading {
  const checked = checkArgon2(hash);
  if (typeof checked === 'string') return checked;
  return {
    scheme: checked.variant,
    // No secret: a hash from elsewhere was made without Tessera's pepper.
    verify: (password) => verify(hash, password).catch(() => false),
  };
}

/** argon2 PHC strings, and Django's `argon2$argon2id$…` (the same string behind a prefix). */
export const argon2Format: Format = (hash) => {
  if (hash.startsWith('$argon2')) return readArgon2(hash);
  if (hash.startsWith('argon2$argon2')) return readArgon2(hash.slice(6));
  return undefined;
};
