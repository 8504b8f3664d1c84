/**
 * The candidate closest to `word` by edit distance (a swap of two neighbours counts as one edit),
 * when it is close enough to be a typo: at most 1 edit for words of up to 4 characters, 2 for
 * longer ones. Kept free of imports so argument errors stay cheap.
 */
export function didYouMean(word: string, candidates: Iterable<string>): string | undefined {
  const target = word.toLowerCase();
  const limit = target.length <= 4 ? 1 : 2;
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const distance = editDistance(target, candidate.toLowerCase());
    if (distance <= limit && (best === undefined || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const columns = b.length + 1;
  const table = new Array<number>(rows * columns).fill(0);
  for (let i = 0; i < rows; i += 1) table[i * columns] = i;
  for (let j = 0; j < columns; j += 1) table[j] = j;
  for (let i = 1; i < rows; i += 1) {
    for (let j = 1; j < columns; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(
        table[(i - 1) * columns + j]! + 1,
        table[i * columns + j - 1]! + 1,
        table[(i - 1) * columns + j - 1]! + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, table[(i - 2) * columns + j - 2]! + 1);
      table[i * columns + j] = value;
    }
  }
  return table[rows * columns - 1]!;
}
