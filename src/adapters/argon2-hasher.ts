import { hash, verify } from '@node-rs/argon2';
import type { PasswordHasher } from '../domain/passwords/password-hasher.js';
import { createLimiter } from '../lib/limiter.js';
import { randomSecret } from '../lib/tokens.js';
import { withImportedHashes } from '../lib/password-hashes/hasher.js';

export interface Argon2Options {
  memoryKib: number;
  iterations: number;
  parallelism: number;
  pepper: string;
  /** Hashes running at once; the rest queue, so the threadpool keeps room for other I/O. */
  concurrency: number;
}

/**
 * argon2id with the pepper as argon2's `secret` input (RFC 9106 "K"); also verifies the
 * hashes `identity import` brought in (lib/password-hashes/), which sign-in then replaces.
 */
export async function createArgon2Hasher(options: Argon2Options): Promise<PasswordHasher> {
  const argonOptions = {
    algorithm: 2 /* Algorithm.Argon2id: a const enum, inlined for isolated builds */,
    memoryCost: options.memoryKib,
    timeCost: options.iterations,
    parallelism: options.parallelism,
    secret: Buffer.from(options.pepper, 'utf8'),
  };
  const limit = createLimiter(options.concurrency);
  const dummyHash = await hash(randomSecret(), argonOptions);

  async function verifyHash(passwordHash: string, password: string): Promise<boolean> {
    try {
      return await limit(() => verify(passwordHash, password, argonOptions));
    } catch {
      return false;
    }
  }

  const own = {
    hash: (password: string) => limit(() => hash(password, argonOptions)),
    verify: verifyHash,
    async verifyDummy(password: string): Promise<false> {
      await verifyHash(dummyHash, password);
      return false;
    },
  };
  return withImportedHashes(own, options.concurrency);
}
