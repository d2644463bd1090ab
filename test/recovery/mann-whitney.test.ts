import { describe, expect, it } from 'vitest';
import { erfc, mannWhitney } from '../helpers/mann-whitney.js';

describe('Mann-Whitney U (the timing report’s statistic)', () => {
  it('matches the textbook values (scipy: U=0, p=0.01219 for 1..5 against 6..10)', () => {
    const result = mannWhitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]);
    expect(result.u).toBe(0);
    expect(result.z).toBeCloseTo(-2.5067, 3);
    expect(result.p).toBeCloseTo(0.01219, 4);
  });

  it('handles ties (scipy: U=2.5, p=0.0765 for 1,2,2,3 against 2,3,4,5)', () => {
    const result = mannWhitney([1, 2, 2, 3], [2, 3, 4, 5, 5]);
    expect(result.u).toBe(2.5);
    expect(result.p).toBeGreaterThan(0.03);
    expect(result.p).toBeLessThan(0.1);
  });

  it('finds no difference between one sample and itself, and a clear one in a shift', () => {
    const values = Array.from({ length: 200 }, (_, i) => (i * 7919) % 1000);
    expect(mannWhitney(values, [...values].reverse()).p).toBe(1);
    expect(
      mannWhitney(
        values,
        values.map((v) => v + 300),
      ).p,
    ).toBeLessThan(1e-6);
  });

  it('erfc agrees with known values', () => {
    expect(erfc(0)).toBeCloseTo(1, 6);
    expect(erfc(1)).toBeCloseTo(0.157299, 5);
    expect(erfc(-1)).toBeCloseTo(1.842701, 5);
  });
});
