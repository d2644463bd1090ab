/** Levenshtein distance: the single-character insertions, deletions and substitutions from a to b. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The candidate nearest to `word`, or null when even that one differs in more than a
 * third of its characters (at least two may differ): a suggestion that far off misleads.
 */
export function closest(word: string, candidates: readonly string[]): string | null {
  let best: { candidate: string; distance: number } | null = null;
  for (const candidate of candidates) {
    const distance = editDistance(word, candidate);
    if (distance > Math.max(2, Math.floor(candidate.length / 3))) continue;
    if (best === null || distance < best.distance) best = { candidate, distance };
  }
  return best?.candidate ?? null;
}
