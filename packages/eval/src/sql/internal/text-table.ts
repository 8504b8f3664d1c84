/** Aligns cells into columns; `right[i]` right-aligns column i. */
export function table(rows: readonly (readonly string[])[], right: readonly boolean[] = []): string[] {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? [];
  return rows.map((row) =>
    row
      .map((cell, column) => (right[column] === true ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd(),
  );
}
