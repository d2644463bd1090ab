import { hash as bcryptHash } from '@node-rs/bcrypt';
import { hash as argon2Hash } from '@node-rs/argon2';
import { describe, expect, it } from 'vitest';
import { createArgon2Hasher } from '../../src/adapters/argon2-hasher.js';
import { IMPORT_BOUNDS } from '../../src/adapters/password-hashes/bounds.js';
import { IMPORTED_PREFIX, readForeignHash } from '../../src/adapters/password-hashes/formats.js';
import { hashTransfer } from '../../src/adapters/password-hashes/transfer.js';
import { FIXTURE_FORMATS } from '../helpers/hash-fixtures.js';

/**
 * Hashes written by the formats' own software, from passlib's and Django's test suites:
 * they check the parsers against the real thing, not against this project's reading of it.
 */
const PUBLISHED: Array<[scheme: string, password: string, hash: string]> = [
  ['pbkdf2-sha1', 'password', '$pbkdf2$1212$OB.dtnSEXZK8U5cgxU/GYQ$y5LKPOplRmok7CZp/aqVDVg8zGI'],
  [
    'pbkdf2-sha256',
    'password',
    '$pbkdf2-sha256$1212$4vjV83LKPjQzk31VI4E0Vw$hsYF68OiOUPdDZ1Fg.fJPeq1h/gXXY7acBp9/6c.tmQ',
  ],
  [
    'pbkdf2-sha256',
    '\u0399\u03c9\u03b1\u03bd\u03bd\u03b7\u03c2',
    '$pbkdf2-sha256$1212$3SABFJGDtyhrQMVt1uABPw$WyaUoqCLgvz97s523nF4iuOqZNbp5Nt8do/cuaa7AiI',
  ],
  [
    'pbkdf2-sha512',
    'password',
    '$pbkdf2-sha512$1212$RHY0Fr3IDMSVO/RSZyb5ow$eNLfBK.eVozomMr.1gYa17k9B7KIK25NOEshvhrSX.esqY3s.FvWZViXz4KoLlQI.BzY/YTNJOiKc5gBYFYGww',
  ],
  [
    'scrypt',
    'password',
    '$scrypt$ln=8,r=8,p=1$WKs1xljLudd6z9kbY0wpJQ$yCR4iDZYDKv+iEJj6yHY0lv/epnfB6f/w1EbXrsJOuQ',
  ],
  [
    'scrypt',
    'lètmein',
    'scrypt$16384$seasalt$8$1$Qj3+9PPyRjSJIebHnG81TMjsqtaIGxNQG/aEB/NYafTJ7tibgfYz71m0ldQESkXFRkdVCBhhY8mx7rQwite/Pw==',
  ],
  [
    'pbkdf2-sha256',
    'lètmein',
    'pbkdf2_sha256$260000$seasalt$YlZ2Vggtqdc61YjArZuoApoBh9JNGYoDRBUGu6tcJQo=',
  ],
];

function read(hash: string) {
  const reading = readForeignHash(hash);
  if (typeof reading === 'string') throw new Error(`refused: ${reading}`);
  return reading;
}

describe('imported hash formats', () => {
  it.each(PUBLISHED)(
    '%s from passlib/Django verifies %j and nothing else',
    async (scheme, password, hash) => {
      const reading = read(hash);
      expect(reading.scheme).toBe(scheme);
      expect(await reading.verify(password)).toBe(true);
      expect(await reading.verify(`${password}x`)).toBe(false);
    },
  );

  it.each(Object.entries(FIXTURE_FORMATS))(
    '%s made by the real library verifies',
    async (_, make) => {
      const hash = await make('the original password');
      const reading = read(hash);
      expect(await reading.verify('the original password')).toBe(true);
      expect(await reading.verify('the original passwore')).toBe(false);
    },
  );

  it('bcrypt verifies $2a$, $2b$ and $2y$ and refuses $2x$ (the buggy variant)', async () => {
    const hash = await bcryptHash('p4ssword', 4);
    for (const version of ['2a', '2b', '2y']) {
      expect(await read(hash.replace('$2b$', `$${version}$`)).verify('p4ssword')).toBe(true);
    }
    expect(readForeignHash(hash.replace('$2b$', '$2x$'))).toBe(
      'bcrypt $2x$ hashes are not accepted',
    );
  });

  describe('a cost beyond the bounds is refused, naming the bound', () => {
    const salt = 'c2FsdHNhbHRzYWx0c2FsdA';
    const key32 = 'A'.repeat(43);
    it.each([
      [
        'bcrypt cost 15',
        `$2b$15$${'.'.repeat(53)}`,
        `bcrypt cost 15 is above the import bound of ${IMPORT_BOUNDS.bcryptCost}`,
      ],
      [
        'PBKDF2 one iteration too many',
        `$pbkdf2-sha256$2000001$${salt}$${key32}`,
        'pbkdf2-sha256 iterations 2000001 are above the import bound of 2000000',
      ],
      [
        'Django PBKDF2 too',
        `pbkdf2_sha256$2000001$seasalt$${Buffer.alloc(32).toString('base64')}`,
        'pbkdf2-sha256 iterations 2000001 are above the import bound of 2000000',
      ],
      [
        'scrypt memory of 256 MiB',
        `$scrypt$ln=18,r=8,p=1$${salt}$${key32}`,
        'scrypt memory 128·N·r = 256 MiB is above the import bound of 128 MiB',
      ],
      [
        'scrypt work of 384 MiB',
        `scrypt$131072$seasalt$8$3$${Buffer.alloc(64).toString('base64')}`,
        'scrypt work 128·N·r·p = 384 MiB is above the import bound of 256 MiB',
      ],
      [
        'argon2 memory',
        `$argon2id$v=19$m=262145,t=1,p=1$${salt}$${key32}`,
        'argon2 memory m=262145 KiB is above the import bound of 262144 KiB',
      ],
      [
        'argon2 work',
        `$argon2id$v=19$m=65536,t=17,p=1$${salt}$${key32}`,
        'argon2 work m·t = 1114112 KiB is above the import bound of 1048576 KiB',
      ],
      [
        'argon2 lanes',
        `$argon2id$v=19$m=65536,t=1,p=17$${salt}$${key32}`,
        'argon2 parallelism p=17 is above the import bound of 16',
      ],
    ])('%s', (_, hash, message) => {
      expect(readForeignHash(hash)).toBe(message);
      expect(hashTransfer.accept(hash, { peppered: false })).toEqual({ refused: message });
    });

    it('the largest costs within the bounds are accepted', () => {
      const accepted = [
        `$2b$14$${'.'.repeat(53)}`,
        `$pbkdf2-sha512$2000000$${salt}$${'A'.repeat(86)}`,
        `$scrypt$ln=17,r=8,p=2$${salt}$${key32}`,
        `$argon2id$v=19$m=262144,t=4,p=16$${salt}$${key32}`,
      ];
      for (const hash of accepted)
        expect(readForeignHash(hash)).toMatchObject({ scheme: expect.any(String) });
    });
  });

  it.each([
    ['an unknown format', '{SSHA}DnKiYrOFTEkn+VpML/5/mBX+VpPyx0J0rjW88Q==', /no accepted format/],
    ['MD5 crypt', '$1$salt$qJH7.N4xYta3aEG/dfqo/0', /no accepted format/],
    ['argon2d', '$argon2d$v=19$m=1024,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo', /argon2d/],
    ['a truncated bcrypt hash', '$2b$12$short', /bcrypt hash is malformed/],
    ['a PBKDF2 hash of the wrong length', '$pbkdf2-sha256$1000$c2FsdA$aGFzaA', /must be 32 bytes/],
    ['Django PBKDF2 with broken base64', 'pbkdf2_sha256$1000$salt$!!!!', /malformed/],
    [
      'zero-padded rounds',
      '$pbkdf2-sha256$01212$4vjV83LKPjQzk31VI4E0Vw$hsYF68OiOUPdDZ1Fg.fJPeq1h/gXXY7acBp9/6c.tmQ',
      /malformed/,
    ],
    [
      'scrypt N not a power of 2',
      `scrypt$1000$salt$8$1$${Buffer.alloc(64).toString('base64')}`,
      /power of 2/,
    ],
    ['non-ASCII', 'pbkdf2_sha256$1000$sälz$aGFzaA==', /printable ASCII/],
    ['a newline', '$2b$04$abc\n', /printable ASCII/],
  ])('refuses %s', (_, hash, message) => {
    expect(readForeignHash(hash)).toMatch(message);
  });

  it("accepts a Tessera export's peppered argon2id as Tessera's own and hands imported hashes back unchanged", async () => {
    const own = await argon2Hash('x', { memoryCost: 1024, timeCost: 1 });
    expect(hashTransfer.accept(own, { peppered: true })).toEqual({
      stored: own,
      scheme: 'tessera',
    });
    expect(hashTransfer.portable(own)).toEqual({ password_hash: own, peppered: true });
    expect(hashTransfer.accept('$2b$04$abc', { peppered: true })).toEqual({
      refused: 'argon2 hash is malformed',
    });
    const bcrypt = await bcryptHash('x', 4);
    const stored = hashTransfer.accept(bcrypt, { peppered: false });
    expect(stored).toEqual({ stored: `${IMPORTED_PREFIX}${bcrypt}`, scheme: 'bcrypt' });
    expect(hashTransfer.portable(`${IMPORTED_PREFIX}${bcrypt}`)).toEqual({
      password_hash: bcrypt,
      peppered: false,
    });
  });

  describe('the hasher', () => {
    const hasher = createArgon2Hasher({
      memoryKib: 1024,
      iterations: 1,
      parallelism: 1,
      pepper: 'test-pepper',
      concurrency: 2,
    });

    it('verifies stored imported hashes and names their scheme; its own hashes have none', async () => {
      const h = await hasher;
      const stored = `${IMPORTED_PREFIX}${await FIXTURE_FORMATS.passlib_scrypt!('s3cret pass')}`;
      expect(await h.verify(stored, 's3cret pass')).toBe(true);
      expect(await h.verify(stored, 's3cret pasS')).toBe(false);
      expect(h.foreignScheme(stored)).toBe('scrypt');
      const own = await h.hash('s3cret pass');
      expect(own).toMatch(/^\$argon2id\$/);
      expect(h.foreignScheme(own)).toBeNull();
      expect(await h.verify(own, 's3cret pass')).toBe(true);
    });

    it('an unpeppered argon2 hash verifies only as imported, never as its own', async () => {
      const h = await hasher;
      const foreign = await argon2Hash('s3cret pass', { memoryCost: 1024, timeCost: 1 });
      expect(await h.verify(foreign, 's3cret pass')).toBe(false);
      expect(await h.verify(`${IMPORTED_PREFIX}${foreign}`, 's3cret pass')).toBe(true);
    });

    it('a stored imported hash beyond the bounds (written by other means) never verifies', async () => {
      const h = await hasher;
      const costly = await bcryptHash('s3cret pass', 4);
      // Cost 15 would pass bcrypt's own parser; the bound is checked before every verify.
      const stored = `${IMPORTED_PREFIX}${costly.replace('$04$', '$15$')}`;
      expect(await h.verify(stored, 's3cret pass')).toBe(false);
    });
  });
});
