/**
 * The bound argon2 itself sets on password login: argon2id verifications per second with the
 * service's parameters (SERVICE_ARGON2_*, read through the service's own config loader) and
 * its concurrency (SERVICE_HASH_CONCURRENCY verifications in flight, on the same libuv
 * threadpool size), in a process of its own. Prints one JSON line.
 *
 * Usage: node --import tsx bench/argon2-bound.ts <seconds>
 */
import { hash, verify } from '@node-rs/argon2';
import { benchArgon2 } from './lib/argon2.js';
import { BENCH_PASSWORD } from './lib/data.js';

export interface BoundResult {
  verifications: number;
  durationSec: number;
  perSec: number;
  /** CPU seconds (all threads) the verifications used. */
  cpuSeconds: number;
  concurrency: number;
  params: { memoryKib: number; iterations: number; parallelism: number };
}

const seconds = Number(process.argv[2] ?? 5);
const { config, options } = benchArgon2();
const stored = await hash(BENCH_PASSWORD, options);
// One warm-up verification per slot, outside the measurement.
await Promise.all(
  Array.from({ length: config.hashConcurrency }, () => verify(stored, BENCH_PASSWORD, options)),
);

let verifications = 0;
const cpuBefore = process.cpuUsage();
const started = process.hrtime.bigint();
const deadline = started + BigInt(Math.round(seconds * 1e9));
await Promise.all(
  Array.from({ length: config.hashConcurrency }, async () => {
    while (process.hrtime.bigint() < deadline) {
      if (!(await verify(stored, BENCH_PASSWORD, options))) throw new Error('verify failed');
      verifications += 1;
    }
  }),
);
const durationSec = Number(process.hrtime.bigint() - started) / 1e9;
const cpu = process.cpuUsage(cpuBefore);
const result: BoundResult = {
  verifications,
  durationSec,
  perSec: verifications / durationSec,
  cpuSeconds: (cpu.user + cpu.system) / 1e6,
  concurrency: config.hashConcurrency,
  params: config.argon2,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
