import { hash, verify } from '@node-rs/argon2';
import type { PasswordHasher } from '../domain/passwords/password-hasher.js';
import { createLimiter } from '../lib/limiter.js';
import { randomSecret } from '../lib/tokens.js';
import { withImportedHashes } from '../adapters/password-hashes/hasher.js';
import {
  createPepperRing,
  readPepperId,
  withPepperId,
} from '../adapters/password-hashes/peppers.js';

export interface Argon2Options {
  memoryKib: number;
  iterations: number;
  parallelism: number;
  pepper: string;
  /** Retired peppers (SERVICE_PASSWORD_PEPPERS_PREVIOUS, newest first): they still verify. */
  previousPeppers?: readonly string[];
  /** Hashes running at once; the rest queue, so the threadpool keeps room for other I/O. */
  concurrency: number;
}

/**
 * argon2id with the pepper as argon2's `secret` input (RFC 9106 "K"); each hash names its
 * pepper by id (`keyid=` in the PHC string), so retired peppers keep verifying what they
 * made (docs/password-hashing.md). Also verifies the hashes `identity import` brought in
 * (adapters/password-hashes/), which sign-in then replaces.
 */
export async function createArgon2Hasher(options: Argon2Options): Promise<PasswordHasher> {
  const ring = createPepperRing(options.pepper, options.previousPeppers);
  const argonOptions = (secret: Buffer) => ({
    algorithm: 2 /* Algorithm.Argon2id: a const enum, inlined for isolated builds */,
    memoryCost: options.memoryKib,
    timeCost: options.iterations,
    parallelism: options.parallelism,
    secret,
  });
  const current = argonOptions(ring.current.secret);
  const limit = createLimiter(options.concurrency);
  // Made on first use, not here: a CLI command that checks no password should not pay an
  // argon2 hash (13 ms of CPU at the default parameters, 83 ms at 64 MiB and t=3). `serve`
  // makes it before it listens, so no sign-in waits for it.
  let dummyHash: Promise<string> | undefined;

  async function verifyWith(phc: string, password: string, secret: Buffer): Promise<boolean> {
    try {
      return await limit(() => verify(phc, password, argonOptions(secret)));
    } catch {
      return false;
    }
  }

  async function verifyDummy(password: string): Promise<false> {
    dummyHash ??= limit(() => hash(randomSecret(), current));
    await verifyWith(await dummyHash, password, ring.current.secret);
    return false;
  }

  const own = {
    hash: async (password: string) =>
      withPepperId(await limit(() => hash(password, current)), ring.current.id),
    async verify(passwordHash: string, password: string): Promise<boolean> {
      const { id, phc } = readPepperId(passwordHash);
      const pepper = id === null ? ring.untagged : ring.byId(id);
      // A retired pepper that is gone: the same work as a wrong password, and the same answer.
      if (!pepper) return verifyDummy(password);
      return verifyWith(phc, password, pepper.secret);
    },
    verifyDummy,
    pepperOf(passwordHash: string) {
      const named = readPepperId(passwordHash).id;
      const id = named ?? ring.untagged.id;
      return { id, tagged: named !== null, known: ring.byId(id) !== undefined };
    },
    peppers: { current: ring.current.id, previous: ring.all.slice(1).map((pepper) => pepper.id) },
  };
  return withImportedHashes(own, options.concurrency);
}
