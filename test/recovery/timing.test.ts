import { randomInt } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { addUser } from '../account/helpers.js';
import { createTestApp } from '../helpers/app.js';
import { type DatabaseKind, postgresAvailable } from '../helpers/databases.js';
import { mannWhitney } from '../helpers/mann-whitney.js';
import { LOOSE_SIGN_IN_LIMITS } from '../flows/helpers.js';
import { PUBLIC_URL } from '../verification/helpers.js';

/**
 * Issue 23's enumeration check by timing: how long `POST /v1/recovery/{id}/email` takes for
 * a known (verified) address against an unknown one, SAMPLES of each in random order, and
 * the Mann-Whitney U test of the two samples. A report, never a threshold: it prints U, z
 * and p and asserts only that it measured (every answer a 200). The suite runs a small
 * sample on every run (CI requires every test to run); for a figure worth reading, run
 *
 *   SERVICE_TEST_RECOVERY_TIMING=200 npx vitest run test/recovery/timing.test.ts
 *
 * (and SERVICE_TEST_DATABASE_URL for PostgreSQL too). docs/recovery.md records a run.
 */
const SAMPLES = Number(process.env.SERVICE_TEST_RECOVERY_TIMING ?? 16);

function report(kind: DatabaseKind) {
  it(`known against unknown addresses, ${SAMPLES} samples each [${kind}]`, async () => {
    const t = await createTestApp(kind, {
      ...LOOSE_SIGN_IN_LIMITS,
      SERVICE_PUBLIC_URL: PUBLIC_URL,
    });
    try {
      const writer = await t.token('identity_write');
      // Distinct addresses each time: one address is limited to a few mails an hour.
      const known: string[] = [];
      for (let i = 0; i < SAMPLES; i += 1) {
        const user = await addUser(t);
        const email = `${user.username}@known.example.com`;
        await t.call('PUT', `/v1/identities/${user.id}/email`, writer, { email, verified: true });
        known.push(email);
      }
      const unknown = known.map((email) => email.replace('@known.', '@unknown.'));
      const order = [...known.map((e) => ['known', e]), ...unknown.map((e) => ['unknown', e])];
      for (let i = order.length - 1; i > 0; i -= 1) {
        const j = randomInt(i + 1);
        [order[i], order[j]] = [order[j]!, order[i]!];
      }
      const times: Record<string, number[]> = { known: [], unknown: [] };
      const warmUp = await t.inject({ method: 'GET', url: '/v1/recovery' });
      await t.inject({
        method: 'POST',
        url: `/v1/recovery/${warmUp.json().id}/email`,
        payload: { csrf_token: warmUp.json().csrf_token, email: 'warm-up@example.com' },
      });
      for (const [which, email] of order) {
        const flow = (await t.inject({ method: 'GET', url: '/v1/recovery' })).json();
        const started = process.hrtime.bigint();
        const res = await t.inject({
          method: 'POST',
          url: `/v1/recovery/${flow.id}/email`,
          payload: { csrf_token: flow.csrf_token, email },
        });
        const micros = Number(process.hrtime.bigint() - started) / 1000;
        expect(res.statusCode, res.body).toBe(200);
        times[which!]!.push(micros);
      }
      const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
      const { u, z, p } = mannWhitney(times.known!, times.unknown!);
      console.log(
        `recovery timing [${kind}]: ${SAMPLES} samples each; median known ${median(times.known!).toFixed(0)} µs, unknown ${median(times.unknown!).toFixed(0)} µs; U=${u} z=${z.toFixed(3)} p=${p.toFixed(4)}`,
      );
      expect(times.known).toHaveLength(SAMPLES);
    } finally {
      await t.close();
    }
  }, 600_000);
}

describe('recovery timing report (Mann-Whitney U)', () => {
  report('sqlite');
  if (postgresAvailable) report('postgres');
});
