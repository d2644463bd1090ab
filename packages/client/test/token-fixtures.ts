import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { TOKEN_PREFIX, type TokenKind } from '@tessera/client';

/** A token in the checksummed format, made with Node's own zlib.crc32 (not the client's). */
export function checksummedToken(kind: TokenKind, random: Buffer = randomBytes(28)): string {
  const prefix = TOKEN_PREFIX[kind];
  const sum = Buffer.alloc(4);
  sum.writeUInt32BE(crc32(Buffer.concat([Buffer.from(prefix, 'ascii'), random])));
  return prefix + Buffer.concat([random, sum]).toString('base64url');
}

/** A token as minted before checksums: 32 random bytes (its last four fail the checksum). */
export function legacyToken(kind: TokenKind): string {
  for (;;) {
    const token = TOKEN_PREFIX[kind] + randomBytes(32).toString('base64url');
    // One in 2^32 random tokens happens to carry a valid checksum; never hand that one out.
    const body = Buffer.from(token.slice(TOKEN_PREFIX[kind].length), 'base64url');
    const sum = crc32(Buffer.concat([Buffer.from(TOKEN_PREFIX[kind]), body.subarray(0, 28)]));
    if (body.readUInt32BE(28) !== sum) return token;
  }
}
