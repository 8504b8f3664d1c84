/** A key that is not known, and the known key it most likely means. */
export interface KeySuggestion {
  key: string;
  suggestion?: string;
}

/**
 * An unknown key with the one of `known` it most likely means: an alias, else the nearest name
 * within a quarter of its length in edits (insert, delete, replace, swap two neighbours).
 */
export function suggestKey(
  key: string,
  known: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): KeySuggestion {
  const normalized = key.trim().toLowerCase().replace(/-/g, '_');
  const alias = aliases[normalized];
  if (alias !== undefined && known.includes(alias)) return { key, suggestion: alias };
  let best: { name: string; distance: number } | undefined;
  for (const name of known) {
    const distance = editDistance(normalized, name);
    if (best === undefined || distance < best.distance) best = { name, distance };
  }
  return best !== undefined && best.distance <= Math.max(1, Math.floor(best.name.length / 4))
    ? { key, suggestion: best.name }
    : { key };
}

/** Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`. */
function editDistance(a: string, b: string): number {
  const rows: number[][] = [Array.from({ length: b.length + 1 }, (_, index) => index)];
  for (let i = 1; i <= a.length; i += 1) {
    const row = [i];
    for (let j = 1; j <= b.length; j += 1) {
      let best = Math.min(
        rows[i - 1]![j]! + 1,
        row[j - 1]! + 1,
        rows[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      row[j] = best;
    }
    rows.push(row);
  }
  return rows[a.length]![b.length]!;
}
