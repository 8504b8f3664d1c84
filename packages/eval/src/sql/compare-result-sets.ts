/** A value SQLite returns: NULL, an integer (bigint when read as a safe integer), a real, text or a blob. */
export type SqlValue = null | number | bigint | string | Uint8Array;

/** Options of {@link compareResultSets}. */
export interface CompareResultSetsOptions {
  /**
   * Reals are compared after rounding to this many decimal places (default 6), so that the same
   * SUM or AVG computed in another order (1.0508050242648312 vs 1.0508050242648173) still
   * matches. `null` compares reals exactly, as BIRD's own script does.
   */
  floatDecimals?: number | null;
  /** `set` (default, BIRD): duplicate rows count once. `multiset`: each duplicate must be matched. */
  duplicates?: 'set' | 'multiset';
}

/** The outcome of {@link compareResultSets}. */
export interface ResultSetComparison {
  /** Whether the predicted rows match the gold rows. */
  equal: boolean;
  /** Why they differ, for the report (undefined when equal). */
  reason?: string;
}

/**
 * Compares two result sets as BIRD's execution accuracy does: the rows as a set, so row order
 * and (by default) duplicates do not matter, while the order of columns inside a row does.
 * Values compare as Python's `sqlite3` results do in BIRD's `set(predicted) == set(gold)`: NULL
 * equals NULL, the integer 1 equals the real 1.0, and text '1' equals neither. Reals are
 * rounded first (see {@link CompareResultSetsOptions.floatDecimals}).
 */
export function compareResultSets(
  predicted: readonly (readonly SqlValue[])[],
  gold: readonly (readonly SqlValue[])[],
  options: CompareResultSetsOptions = {},
): ResultSetComparison {
  const decimals = options.floatDecimals === undefined ? 6 : options.floatDecimals;
  const predictedKeys = predicted.map((row) => rowKey(row, decimals));
  const goldKeys = gold.map((row) => rowKey(row, decimals));
  const predictedCounts = countKeys(predictedKeys, options.duplicates === 'multiset');
  const goldCounts = countKeys(goldKeys, options.duplicates === 'multiset');
  const missing = [...goldCounts].filter(([key, count]) => (predictedCounts.get(key) ?? 0) < count).map(([key]) => key);
  const extra = [...predictedCounts].filter(([key, count]) => (goldCounts.get(key) ?? 0) < count).map(([key]) => key);
  if (missing.length === 0 && extra.length === 0) return { equal: true };
  const widths = (rows: readonly (readonly SqlValue[])[]) => [...new Set(rows.map((row) => row.length))];
  const [predictedWidth] = widths(predicted);
  const [goldWidth] = widths(gold);
  if (predicted.length > 0 && gold.length > 0 && predictedWidth !== goldWidth) {
    return { equal: false, reason: `different columns: ${predictedWidth} predicted vs ${goldWidth} gold` };
  }
  const parts = [`${predicted.length} predicted row(s) vs ${gold.length} gold row(s)`];
  if (missing.length > 0) parts.push(`${missing.length} gold row(s) missing, e.g. ${showKey(missing[0]!)}`);
  if (extra.length > 0) parts.push(`${extra.length} row(s) not in gold, e.g. ${showKey(extra[0]!)}`);
  return { equal: false, reason: parts.join('; ') };
}

function countKeys(keys: readonly string[], multiset: boolean): Map<string, number> {
  const counts = new Map<string, number>();
  for (const key of keys) counts.set(key, multiset ? (counts.get(key) ?? 0) + 1 : 1);
  return counts;
}

function rowKey(row: readonly SqlValue[], decimals: number | null): string {
  return JSON.stringify(row.map((value) => valueKey(value, decimals)));
}

/** A canonical, type-tagged text for a value: equal keys mean equal values. */
function valueKey(value: SqlValue, decimals: number | null): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'bigint') return `n:${value.toString()}`;
  if (typeof value === 'number') return `n:${numberText(value, decimals)}`;
  if (typeof value === 'string') return `s:${value}`;
  return `b:${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`;
}

function numberText(value: number, decimals: number | null): string {
  if (!Number.isFinite(value)) return String(value);
  const rounded =
    decimals === null || Number.isInteger(value) || Math.abs(value) >= 1e15 ? value : Number(value.toFixed(decimals));
  // Integral values print as integers whatever their storage class, so 1 and 1.0 meet, and so do
  // a bigint and a real of the same whole value beyond 2^53.
  if (Number.isInteger(rounded)) return BigInt(rounded).toString();
  return String(rounded);
}

function showKey(key: string): string {
  const values = JSON.parse(key) as string[];
  const shown = values.map((value) =>
    value === 'null'
      ? 'NULL'
      : value.startsWith('s:')
        ? JSON.stringify(value.slice(2))
        : value.startsWith('b:')
          ? `x'${value.slice(2)}'`
          : value.slice(2),
  );
  const text = `(${shown.join(', ')})`;
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
