import { loadConfig } from '../../src/config.js';
import { BENCH_PEPPER } from './data.js';

/**
 * The service's argon2id settings (SERVICE_ARGON2_*, SERVICE_HASH_CONCURRENCY, read through
 * its own config loader) as the bench's own argon2 users (the bound, the login floor) call
 * the library with them, peppered with the bench's pepper.
 */
export function benchArgon2() {
  const config = loadConfig({ ...process.env, SERVICE_DATABASE_URL: ':memory:' });
  return {
    config,
    options: {
      algorithm: 2 as const,
      memoryCost: config.argon2.memoryKib,
      timeCost: config.argon2.iterations,
      parallelism: config.argon2.parallelism,
      secret: Buffer.from(BENCH_PEPPER, 'utf8'),
    },
  };
}
