import { randomBytes } from 'node:crypto';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  TOKEN_PREFIX,
  checkToken,
  crc32,
  isAcceptableToken,
  type TokenKind,
} from '@tessera/client';
import { checksummedToken, legacyToken } from './token-fixtures.js';

const KINDS = Object.keys(TOKEN_PREFIX) as TokenKind[];

describe('token checksum (offline)', () => {
  it('computes the same CRC-32 as zlib', () => {
    for (const length of [0, 1, 7, 35, 37, 1000]) {
      const bytes = randomBytes(length);
      expect(crc32(bytes)).toBe(zlibCrc32(bytes));
    }
    expect(crc32(new TextEncoder().encode('123456789'))).toBe(0xcbf43926);
  });

  it('accepts a checksummed token of each kind and refuses it under another prefix', () => {
    for (const kind of KINDS) {
      const token = checksummedToken(kind);
      expect(token).toHaveLength(TOKEN_PREFIX[kind].length + 43);
      expect(checkToken(kind, token)).toBe('ok');
      for (const other of KINDS.filter((k) => k !== kind)) {
        // The prefix is inside the checksum: re-prefixing a token breaks it.
        const moved = TOKEN_PREFIX[other] + token.slice(TOKEN_PREFIX[kind].length);
        expect(checkToken(other, moved)).toBe('legacy');
      }
    }
  });

  it('catches every single-character typo of a checksummed token', () => {
    const token = checksummedToken('session');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    for (let i = TOKEN_PREFIX.session.length; i < token.length; i += 1) {
      for (const char of alphabet) {
        if (char === token[i]) continue;
        const typo = token.slice(0, i) + char + token.slice(i + 1);
        expect(checkToken('session', typo), typo).not.toBe('ok');
      }
    }
  });

  it('tells legacy tokens from malformed ones, and accepts legacy only when asked', () => {
    const legacy = legacyToken('session');
    expect(checkToken('session', legacy)).toBe('legacy');
    expect(isAcceptableToken('session', legacy)).toBe(false);
    expect(isAcceptableToken('session', legacy, { acceptLegacyTokens: true })).toBe(true);
    const good = checksummedToken('session');
    for (const bad of [
      undefined,
      42,
      '',
      'tess_s_',
      good.slice(0, -1),
      `${good}A`,
      good.replace('tess_s_', 'TESS_S_'),
      `tess_s_${'='.repeat(43)}`,
      `tess_s_${'A'.repeat(42)}B`, // non-canonical: the last character carries stray bits
      ` ${good}`,
    ]) {
      expect(checkToken('session', bad), String(bad)).toBe('malformed');
      expect(isAcceptableToken('session', bad, { acceptLegacyTokens: true })).toBe(false);
    }
  });
});
