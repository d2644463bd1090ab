import { describe, expect, it } from 'vitest';
import { toIso } from '../../src/lib/clock.js';

const builtin = (ms: number) => new Date(ms).toISOString();
const DAY_MS = 86_400_000;

describe('toIso', () => {
  it('matches Date#toISOString at the edges of days, months, leap years and the range', () => {
    const edges = [
      0,
      1,
      999,
      DAY_MS - 1,
      Date.UTC(2000, 1, 29, 12, 0, 0, 5),
      Date.UTC(2000, 2, 1),
      Date.UTC(2100, 1, 28, 23, 59, 59, 999),
      Date.UTC(2100, 2, 1),
      Date.UTC(2024, 11, 31, 23, 59, 59, 999),
      Date.UTC(2025, 0, 1),
      253_402_300_799_999,
    ];
    for (const ms of edges) expect(toIso(ms)).toBe(builtin(ms));
  });

  it('matches Date#toISOString on every day from 1970 to 2600 at a varying time of day', () => {
    const last = Date.UTC(2600, 0, 1) / DAY_MS;
    for (let day = 0; day <= last; day++) {
      const ms = day * DAY_MS + ((day * 7_919_999) % DAY_MS);
      if (toIso(ms) !== builtin(ms)) expect(toIso(ms)).toBe(builtin(ms));
    }
  });

  it('falls back to the builtin outside 1970-9999 and for fractional milliseconds', () => {
    for (const ms of [-1, -DAY_MS * 400, 253_402_300_800_000, 1.5]) {
      expect(toIso(ms)).toBe(builtin(ms));
    }
    expect(() => toIso(Number.NaN)).toThrow(RangeError);
  });
});
