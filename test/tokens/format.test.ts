import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  TOKEN_PREFIX,
  type TokenKind,
  isWellFormedToken,
  newToken,
  randomSecret,
  tokenShape,
} from '../../src/lib/tokens.js';

const KINDS = Object.keys(TOKEN_PREFIX) as TokenKind[];
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** docs/tokens.md "Format", recomputed here from the definition, not from src/lib. */
function checksumHolds(prefix: string, secret: string): boolean {
  const bytes = Buffer.from(secret, 'base64url');
  const expected = crc32(Buffer.concat([Buffer.from(prefix, 'ascii'), bytes.subarray(0, 28)]));
  return bytes.length === 32 && bytes.readUInt32BE(28) === expected;
}

describe('token format', () => {
  it('uses the IEEE CRC-32 of zlib', () => {
    expect(crc32('123456789')).toBe(0xcbf43926);
  });

  it.each(KINDS)(
    'mints %s tokens: prefix, 43 base64url characters, CRC-32 of prefix and 28 random bytes',
    (kind) => {
      const prefix = TOKEN_PREFIX[kind];
      const seen = new Set<string>();
      for (let i = 0; i < 1000; i++) {
        const token = newToken(kind);
        seen.add(token);
        expect(token.startsWith(prefix)).toBe(true);
        const secret = token.slice(prefix.length);
        expect(secret).toMatch(/^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/);
        expect(checksumHolds(prefix, secret)).toBe(true);
        expect(isWellFormedToken(kind, token)).toBe(true);
        expect(tokenShape(kind, token)).toBe('crc32');
      }
      expect(seen.size).toBe(1000);
    },
  );

  it('checks offline exactly as zlib.crc32 computes it', () => {
    for (const kind of KINDS) {
      const prefix = TOKEN_PREFIX[kind];
      for (let i = 0; i < 3000; i++) {
        const minted = newToken(kind);
        const made = prefix + randomBytes(32).toString('base64url');
        const at = prefix.length + (i % 43);
        const typo = minted.slice(0, at) + (minted[at] === 'Q' ? 'g' : 'Q') + minted.slice(at + 1);
        for (const value of [minted, made, typo]) {
          const secret = value.slice(prefix.length);
          const canonical = /[AEIMQUYcgkosw048]$/.test(secret);
          const expected = !canonical
            ? 'malformed'
            : checksumHolds(prefix, secret)
              ? 'crc32'
              : 'unchecked';
          expect(tokenShape(kind, value)).toBe(expected);
        }
      }
    }
  });

  it('ties the checksum to the prefix: a token of one kind under another prefix fails', () => {
    for (const kind of KINDS) {
      const secret = newToken(kind).slice(TOKEN_PREFIX[kind].length);
      for (const other of KINDS.filter((k) => k !== kind)) {
        expect(tokenShape(other, TOKEN_PREFIX[other] + secret)).toBe('unchecked');
      }
    }
  });

  it('catches every one-character typo and every swap of neighbours', () => {
    let variants = 0;
    for (const kind of KINDS) {
      for (let n = 0; n < 5; n++) {
        const token = newToken(kind);
        for (let at = TOKEN_PREFIX[kind].length; at < token.length; at++) {
          for (const c of BASE64URL) {
            if (c === token[at]) continue;
            variants++;
            expect(tokenShape(kind, token.slice(0, at) + c + token.slice(at + 1))).not.toBe(
              'crc32',
            );
          }
          if (at + 1 < token.length && token[at] !== token[at + 1]) {
            const swapped = token.slice(0, at) + token[at + 1] + token[at] + token.slice(at + 2);
            expect(tokenShape(kind, swapped)).not.toBe('crc32');
          }
        }
      }
    }
    expect(variants).toBe(KINDS.length * 5 * 43 * 63);
  });

  it('sorts what is presented: checksummed, unchecked (pre-checksum or mistyped), malformed', () => {
    const token = newToken('session');
    const legacy = `tess_s_${randomBytes(32).toString('base64url')}`;
    expect(['unchecked', 'crc32']).toContain(tokenShape('session', legacy));
    expect(tokenShape('session', token.slice(0, -1))).toBe('malformed');
    expect(tokenShape('session', `${token}A`)).toBe('malformed');
    // No encoder ends 32 bytes with a character whose two low bits are set.
    expect(tokenShape('session', `${token.slice(0, -1)}B`)).toBe('malformed');
    expect(tokenShape('session', token.replace('tess_s_', 'tess_x_'))).toBe('malformed');
    expect(tokenShape('session', token.replace(/.$/, '='))).toBe('malformed');
    for (const value of [undefined, null, 42, {}, '', 'tess_s_']) {
      expect(tokenShape('session', value)).toBe('malformed');
    }
  });

  it('draws every token and secret afresh from the pooled generator, across its refills', () => {
    // 2 KiB a refill: 5,000 draws of 28 or 32 bytes cross it dozens of times.
    const seen = new Set<string>();
    const draws: Buffer[] = [];
    for (let i = 0; i < 2_500; i++) {
      const token = newToken('session');
      const secret = randomSecret();
      expect(tokenShape('session', token)).toBe('crc32');
      expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      seen.add(token).add(secret);
      draws.push(Buffer.from(token.slice(7), 'base64url').subarray(0, 28));
      draws.push(Buffer.from(secret, 'base64url'));
    }
    expect(seen.size).toBe(5_000);
    // Draws that overlapped in the pool would share bytes: the end of one the start of
    // the next (4 bytes or more: random data matches fewer by chance often enough).
    const overlapping = draws.slice(1).filter((next, i) => {
      const previous = draws[i]!;
      for (let shared = 4; shared <= Math.min(previous.length, next.length); shared++) {
        if (previous.subarray(-shared).equals(next.subarray(0, shared))) return true;
      }
      return false;
    });
    expect(overlapping).toEqual([]);
    // The pool zeroes what it hands out: a draw reading much of it again, or an unfilled
    // pool, holds a run of zeros (8 in a row by chance: about once in 10^15 runs).
    const zeros = Buffer.alloc(8);
    expect(draws.filter((bytes) => bytes.includes(zeros))).toEqual([]);
    // A draw reading even a byte of its predecessor's starts with zero: 1 in 256 by chance
    // (about 20 of 5,000, and 100 is eighteen standard deviations above that).
    expect(draws.filter((bytes) => bytes[0] === 0).length).toBeLessThan(100);
  });
});
