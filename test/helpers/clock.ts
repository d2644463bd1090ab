import type { Clock } from '../../src/lib/clock.js';

/** A clock tests move by hand: time-dependent rules are tested without sleeping. */
export class FakeClock implements Clock {
  constructor(private current = Date.parse('2026-11-21T10:00:00.000Z')) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}
