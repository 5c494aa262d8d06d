// "did you mean ...?" for a misspelled setting name: the closest known
// spelling by edit distance, when it is close enough to be a typo.

/** Levenshtein distance (insert, delete, substitute: 1 each). */
function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

/** The known word closest to `word`, or undefined when none is near (a prefix of one counts as near). */
export function closest(word: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = k.startsWith(word) || word.startsWith(k) ? Math.min(1, distance(word, k)) : distance(word, k);
    if (d < bestDistance) {
      best = k;
      bestDistance = d;
    }
  }
  // A third of the word may be wrong: --guard-mod, --guard-allco, --guard-suppresions.
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

/** `; did you mean --guard-mode?` or `; known: ...`, for an error about `word`. */
export function suggestion(word: string, known: readonly string[]): string {
  const near = closest(word, known);
  return near ? `; did you mean ${near}?` : `; known: ${known.join(', ')}`;
}
