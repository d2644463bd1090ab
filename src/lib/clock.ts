/** Injected wherever time matters so tests can move it instead of sleeping. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

const DAY_MS = 86_400_000;
/** The last millisecond of year 9999: beyond it ISO 8601 needs a sign and six-digit years. */
const MAX_FOUR_DIGIT_YEAR_MS = 253_402_300_799_999;

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);
const pad3 = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`);

/**
 * `new Date(ms).toISOString()`, computed in arithmetic: every session check formats four
 * timestamps, and V8's builtin costs about three times as much. Days to civil date after
 * H. Hinnant's `civil_from_days`; outside 1970-9999 the builtin answers.
 */
export function toIso(ms: number): string {
  if (!(ms >= 0 && ms <= MAX_FOUR_DIGIT_YEAR_MS) || !Number.isInteger(ms)) {
    return new Date(ms).toISOString();
  }
  const days = Math.floor(ms / DAY_MS);
  let rest = ms - days * DAY_MS;
  // Days since 0000-03-01, in 400-year eras of 146,097 days.
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear =
    dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const marchMonth = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * marchMonth + 2) / 5) + 1;
  const month = marchMonth < 10 ? marchMonth + 3 : marchMonth - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const millis = rest - seconds * 1000;
  return `${year}-${pad2(month)}-${pad2(day)}T${pad2(hours)}:${pad2(minutes)}:${pad2(seconds)}.${pad3(millis)}Z`;
}
