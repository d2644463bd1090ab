import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { secretsEqual } from './tokens.js';

/**
 * Authenticated encryption for secrets kept at rest (TOTP secrets, OIDC signing keys), with
 * Node's AES-256-GCM; never a cipher of our own. Keys are derived from the configured
 * secret with HKDF-SHA256, so any long random string is a valid key and the encryption and
 * MAC keys are independent.
 *
 * A sealed value is `sb1.<key id>.<iv>.<ciphertext+tag>` (base64url parts). The key id
 * lets a previous key open what it sealed while the current one seals everything new: that
 * is key rotation (docs/operations.md). `context` is bound as associated data, so a value
 * sealed for one purpose or row (`totp:<identity id>`) does not open as another's.
 */
export interface SecretBox {
  seal(plaintext: string, context: string): string;
  /** The plaintext, or null when no configured key opens it (tampered, wrong context, retired key). */
  open(sealed: string, context: string): string | null;
  /** True when `sealed` was sealed under a previous key: re-seal it under the current one. */
  isStale(sealed: string): boolean;
  /** A keyed digest of `value` for `context` (HMAC-SHA256, base64url), e.g. a CSRF token. */
  mac(context: string, value: string): string;
  /** Constant-time check of a `mac` result. */
  verifyMac(context: string, value: string, candidate: string): boolean;
}

const VERSION = 'sb1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

interface DerivedKey {
  id: string;
  encryption: Buffer;
  mac: Buffer;
}

function derive(secret: string): DerivedKey {
  const ikm = Buffer.from(secret, 'utf8');
  const part = (info: string, length: number) =>
    Buffer.from(hkdfSync('sha256', ikm, Buffer.alloc(0), `tessera ${info}`, length));
  return {
    id: part('key id', 6).toString('base64url'),
    encryption: part('secret box', 32),
    mac: part('mac', 32),
  };
}

export function createSecretBox(current: string, previous: readonly string[] = []): SecretBox {
  const sealing = derive(current);
  const byId = new Map<string, DerivedKey>();
  for (const key of [sealing, ...previous.map(derive)]) {
    if (!byId.has(key.id)) byId.set(key.id, key);
  }

  const parse = (sealed: string) => {
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== VERSION) return null;
    const [, id, iv, body] = parts as [string, string, string, string];
    return { id, iv: Buffer.from(iv, 'base64url'), body: Buffer.from(body, 'base64url') };
  };

  return {
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', sealing.encryption, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([
        cipher.update(plaintext, 'utf8'),
        cipher.final(),
        cipher.getAuthTag(),
      ]);
      return [VERSION, sealing.id, iv.toString('base64url'), body.toString('base64url')].join('.');
    },

    open(sealed, context) {
      const parsed = parse(sealed);
      const key = parsed && byId.get(parsed.id);
      if (!parsed || !key || parsed.iv.length !== IV_BYTES || parsed.body.length < TAG_BYTES) {
        return null;
      }
      try {
        const decipher = createDecipheriv('aes-256-gcm', key.encryption, parsed.iv);
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(parsed.body.subarray(parsed.body.length - TAG_BYTES));
        const plaintext = Buffer.concat([
          decipher.update(parsed.body.subarray(0, parsed.body.length - TAG_BYTES)),
          decipher.final(),
        ]);
        return plaintext.toString('utf8');
      } catch {
        // GCM's tag check failed: tampered, or sealed for another context.
        return null;
      }
    },

    isStale(sealed) {
      return parse(sealed)?.id !== sealing.id;
    },

    mac(context, value) {
      return createHmac('sha256', sealing.mac).update(`${context}\0${value}`).digest('base64url');
    },

    verifyMac(context, value, candidate) {
      return secretsEqual(this.mac(context, value), candidate);
    },
  };
}
