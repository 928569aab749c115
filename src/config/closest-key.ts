/**
 * The known key closest to a misspelt one, or undefined when none is close enough to be a
 * plausible typo (so we never suggest `enabled` for `sftpHost`).
 */
export function closestKey(key: string, known: readonly string[]): string | undefined {
  const lowered = key.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(lowered, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // Allow roughly one typo per three characters, at least one, at most three.
  const limit = Math.min(3, Math.max(1, Math.floor(key.length / 3)));
  return bestDistance <= limit ? best : undefined;
}

/** Damerau–Levenshtein (optimal string alignment): a swap of two letters counts as one edit. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i]!;
      const prev = d[i - 1]!;
      let value = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, d[i - 2]![j - 2]! + 1);
      }
      row[j] = value;
    }
  }
  return d[a.length]![b.length]!;
}
