/** Shorter name parts are ignored: two letters turn up by chance in any long password. */
const MIN_TERM = 3;

/** The comparison form of passwords and names: width- and case-insensitive. */
export function normalizeForComparison(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

function reversed(text: string): string {
  return [...text].reverse().join('');
}

/**
 * The names as a guesser's rules use them: whole, word by word, run together, and each of
 * these reversed. Longest first, so "alice.smith" goes before "alice" does.
 */
export function nameTerms(names: readonly string[]): string[] {
  const terms = new Set<string>();
  for (const name of names) {
    const whole = normalizeForComparison(name).trim();
    const words = whole.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
    for (const term of [whole, words.join(''), ...words]) {
      if ([...term].length < MIN_TERM) continue;
      terms.add(term);
      terms.add(reversed(term));
    }
  }
  return [...terms].sort((a, b) => b.length - a.length);
}

/**
 * What is left of the password once every occurrence of the names is taken out, without
 * whitespace: "Alice Smith 1990!" for Alice Smith leaves "1990!". `null` when no name occurs.
 */
export function restWithoutNames(password: string, names: readonly string[]): string | null {
  const normalized = normalizeForComparison(password);
  let rest = normalized;
  for (const term of nameTerms(names)) rest = rest.split(term).join('');
  return rest === normalized ? null : rest.replace(/\s+/gu, '');
}
