/**
 * What the password policy costs, for docs/password-policy.md: loading the common-password
 * list (wall and main-thread CPU, the longest event-loop stall meanwhile, memory kept),
 * a lookup, loading zxcvbn, and a zxcvbn estimate for typical, 32-character, l33t-heavy
 * and 256-character inputs. Run it alone on a quiet machine; figures on a loaded one only
 * bound from above.
 *
 * Usage: node --expose-gc --import tsx bench/password-policy.ts
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { nameTerms } from '../src/domain/password-policy/context.js';
import {
  loadCommonPasswords,
  resolveCommonPasswordList,
} from '../src/password-checks/common-passwords.js';
import { zxcvbnScore } from '../src/password-checks/strength.js';

const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const ms = (value: number) => `${value.toFixed(1)} ms`;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; wall: number; cpu: number }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const value = await run();
  const wall = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { value, wall, cpu: (used.user + used.system) / 1000 };
}

gc();
const before = process.memoryUsage();
const stalls = monitorEventLoopDelay({ resolution: 1 });
stalls.enable();
const list = await timed(() => loadCommonPasswords(resolveCommonPasswordList()));
stalls.disable();
gc();
const after = process.memoryUsage();
console.log(`list: ${list.value.size} entries kept (of 437,651 lines)`);
console.log(`list load: ${ms(list.wall)} wall, ${ms(list.cpu)} CPU (threadpool included)`);
console.log(`longest event-loop stall while loading: ${ms(stalls.max / 1e6)}`);
console.log(
  `memory kept: heap +${mb(after.heapUsed - before.heapUsed)}, rss +${mb(after.rss - before.rss)}`,
);

const probes = Array.from({ length: 100_000 }, (_, i) => `probe-${i}-password`);
const lookups = await timed(async () => probes.filter((probe) => list.value.has(probe)).length);
console.log(`lookup: ${((lookups.wall * 1000) / probes.length).toFixed(2)} µs each`);

gc();
const beforeEstimator = process.memoryUsage();
const estimator = await timed(() => zxcvbnScore('warm up the estimator', []));
gc();
const afterEstimator = process.memoryUsage();
console.log(
  `zxcvbn load (its thread and dictionaries): ${ms(estimator.wall)} wall, rss +${mb(afterEstimator.rss - beforeEstimator.rss)}`,
);

const inputs = nameTerms(['alice.smith', 'Alice Smith']);
const typical = [
  'correct horse battery',
  'password2024',
  'zq8vbt3w',
  'violet tractor umbrella',
  'Alice in Wonderland 1865',
  'kiwi-lantern-93',
];
for (const [label, passwords] of [
  ['typical (8-24 characters)', typical],
  ['32 characters', typical.map((p) => p.repeat(8).slice(0, 32))],
  ['l33t characters (the costliest matcher)', ['4@8(6<{[1!|7+0$5'.repeat(2), 'p4$$w0rd'.repeat(4)]],
  ['256 characters (scored on the first 32)', ['aB3$'.repeat(64), 'abcdefghij'.repeat(26)]],
] as const) {
  // CPU rather than wall time: the estimate is synchronous, and CPU time is what a busy
  // neighbour inflates least.
  const times: number[] = [];
  for (let round = 0; round < 20; round++) {
    for (const password of passwords) {
      const start = process.cpuUsage();
      await zxcvbnScore(password, inputs);
      const used = process.cpuUsage(start);
      times.push((used.user + used.system) / 1000);
    }
  }
  console.log(`zxcvbn ${label}: median ${ms(median(times))}, worst ${ms(Math.max(...times))} CPU`);
}

// A burst of sign-ups: each estimate allocates about 2 MB that dies young; what the
// process's RSS reaches meanwhile is what the estimator's thread and its heap cap bound.
gc();
const burstStart = process.memoryUsage().rss;
let burstPeak = burstStart;
for (let i = 0; i < 2_000; i++) {
  await zxcvbnScore(`violet tractor umbrella ${i} kiwi`, inputs);
  if (i % 20 === 0) burstPeak = Math.max(burstPeak, process.memoryUsage().rss);
}
console.log(`2,000 estimates of 31 characters: peak rss +${mb(burstPeak - burstStart)}`);
