import { hkdfSync } from 'node:crypto';

/** A configured pepper: its non-secret id and the secret argon2 takes (RFC 9106's K). */
export interface Pepper {
  id: string;
  secret: Buffer;
}

/**
 * The peppers a deployment knows: the current one (every new hash) and the retired ones
 * that still verify what they made (docs/password-hashing.md).
 */
export interface PepperRing {
  current: Pepper;
  /** The current pepper first, then the previous ones as configured (newest first). */
  all: readonly Pepper[];
  /**
   * What a hash without a pepper id (written before ids existed) is read as: the oldest
   * configured pepper, the last previous one, or the current one when none is retired.
   */
  untagged: Pepper;
  byId(id: string): Pepper | undefined;
}

/**
 * A pepper's id: 6 bytes of HKDF-SHA256 of it, in standard base64 (8 characters, as the PHC
 * string format writes a `keyid`). One-way: with a random pepper it reveals nothing.
 */
export function pepperId(pepper: string): string {
  const bytes = hkdfSync(
    'sha256',
    Buffer.from(pepper, 'utf8'),
    Buffer.alloc(0),
    'tessera pepper id',
    6,
  );
  return Buffer.from(bytes).toString('base64');
}

export function createPepperRing(current: string, previous: readonly string[] = []): PepperRing {
  const texts = [current, ...previous];
  const all: Pepper[] = [];
  const index = new Map<string, Pepper>();
  for (const text of texts) {
    const pepper = { id: pepperId(text), secret: Buffer.from(text, 'utf8') };
    // The same pepper listed twice (the current one also among the previous, as when a new
    // pepper is staged before it becomes current) is one pepper.
    if (index.has(pepper.id)) continue;
    index.set(pepper.id, pepper);
    all.push(pepper);
  }
  return {
    current: all[0]!,
    all,
    // The last entry as written, even when it repeats the current one.
    untagged: index.get(pepperId(texts[texts.length - 1]!))!,
    byId: (id) => index.get(id),
  };
}

/** `,keyid=<id>` among the PHC parameters (`m=…,t=…,p=…,keyid=…`), as Tessera writes it. */
const KEYID = /^(\$argon2id\$v=19\$m=[0-9]+,t=[0-9]+,p=[0-9]+),keyid=([A-Za-z0-9+/]{1,11})(\$.*)$/;

/**
 * Splits one of Tessera's own hashes into the pepper id it names (null: untagged) and the
 * plain PHC string argon2 verifies. The id is cut out before verification because the
 * argon2 library gets the pepper as its secret, not by id.
 */
export function readPepperId(hash: string): { id: string | null; phc: string } {
  const match = KEYID.exec(hash);
  return match ? { id: match[2]!, phc: `${match[1]}${match[3]}` } : { id: null, phc: hash };
}

/** A plain argon2id PHC string with the pepper id among its parameters. */
export function withPepperId(phc: string, id: string): string {
  const at = phc.indexOf('$', phc.indexOf('m='));
  if (!phc.startsWith('$argon2id$') || at < 0 || readPepperId(phc).id !== null) return phc;
  return `${phc.slice(0, at)},keyid=${id}${phc.slice(at)}`;
}
