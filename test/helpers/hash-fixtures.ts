import { createHash, pbkdf2Sync, randomBytes, scryptSync } from 'node:crypto';
import { hash as argon2Hash } from '@node-rs/argon2';
import { hash as bcryptHash } from '@node-rs/bcrypt';

/**
 * One password hash in every format `identity import` accepts, computed with the real
 * libraries (bcrypt, argon2) and node:crypto after each format's own definition (Django's
 * hashers, passlib's handlers), at low costs so tests stay quick.
 */
export type FixtureFormat = (password: string) => Promise<string>;

const b64 = (bytes: Buffer) => bytes.toString('base64');
/** passlib's base64 for scrypt: standard alphabet, no padding. */
const b64s = (bytes: Buffer) => b64(bytes).replace(/=+$/, '');
/** passlib's "adapted" base64 for PBKDF2: no padding, `.` for `+`. */
const ab64 = (bytes: Buffer) => b64s(bytes).replaceAll('+', '.');
/** Django's salts are random text, used as their UTF-8 bytes. */
const djangoSalt = () => randomBytes(12).toString('base64url').replace(/[-_]/g, 'x');

function djangoPbkdf2(digest: 'sha1' | 'sha256' | 'sha512', bytes: number): FixtureFormat {
  return async (password) => {
    const salt = djangoSalt();
    const key = pbkdf2Sync(password, salt, 1000, bytes, digest);
    return `pbkdf2_${digest}$1000$${salt}$${b64(key)}`;
  };
}

function passlibPbkdf2(digest: 'sha1' | 'sha256' | 'sha512', bytes: number): FixtureFormat {
  return async (password) => {
    const salt = randomBytes(16);
    const key = pbkdf2Sync(password, salt, 1000, bytes, digest);
    const ident = digest === 'sha1' ? '$pbkdf2$' : `$pbkdf2-${digest}$`;
    return `${ident}1000$${ab64(salt)}$${ab64(key)}`;
  };
}

/**
 * bcrypt under another version prefix: the library writes `$2b$` only, and `$2a$`/`$2y$`
 * hash ASCII passwords of under 255 bytes exactly as `$2b$` does.
 */
const bcryptAs =
  (version: '2a' | '2b' | '2y'): FixtureFormat =>
  async (password) =>
    `$${version}$${(await bcryptHash(password, 4)).slice(4)}`;

export const FIXTURE_FORMATS: Record<string, FixtureFormat> = {
  argon2id: (password) => argon2Hash(password, { memoryCost: 1024, timeCost: 1, algorithm: 2 }),
  argon2i: (password) => argon2Hash(password, { memoryCost: 1024, timeCost: 2, algorithm: 1 }),
  django_argon2: async (password) =>
    `argon2${await argon2Hash(password, { memoryCost: 1024, timeCost: 1, parallelism: 2, algorithm: 2 })}`,
  bcrypt_2a: bcryptAs('2a'),
  bcrypt_2b: bcryptAs('2b'),
  bcrypt_2y: bcryptAs('2y'),
  django_bcrypt: async (password) => `bcrypt$${await bcryptHash(password, 4)}`,
  django_bcrypt_sha256: async (password) => {
    const prehashed = createHash('sha256').update(password).digest('hex');
    return `bcrypt_sha256$${await bcryptHash(prehashed, 4)}`;
  },
  django_pbkdf2_sha256: djangoPbkdf2('sha256', 32),
  django_pbkdf2_sha1: djangoPbkdf2('sha1', 20),
  django_pbkdf2_sha512: djangoPbkdf2('sha512', 64),
  passlib_pbkdf2_sha256: passlibPbkdf2('sha256', 32),
  passlib_pbkdf2_sha512: passlibPbkdf2('sha512', 64),
  passlib_pbkdf2_sha1: passlibPbkdf2('sha1', 20),
  django_scrypt: async (password) => {
    const salt = djangoSalt();
    const key = scryptSync(password, salt, 64, { N: 1024, r: 8, p: 1 });
    return `scrypt$1024$${salt}$8$1$${b64(key)}`;
  },
  passlib_scrypt: async (password) => {
    const salt = randomBytes(16);
    const key = scryptSync(password, salt, 32, { N: 1024, r: 8, p: 2 });
    return `$scrypt$ln=10,r=8,p=2$${b64s(salt)}$${b64s(key)}`;
  },
};
