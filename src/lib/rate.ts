export interface RateLimitRule {
  limit: number;
  windowMs: number;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000 };

/** Parses `<count>/<window>` such as `10/15m`; returns null when the text is not of that form. */
export function parseRateLimitRule(text: string): RateLimitRule | null {
  const match = /^(\d+)\/(\d+)([smh])$/.exec(text.trim());
  if (!match) return null;
  const limit = Number(match[1]);
  const windowMs = Number(match[2]) * UNIT_MS[match[3]!]!;
  if (limit < 1 || windowMs < 1) return null;
  return { limit, windowMs };
}
