import { cellText } from './cell-text.js';

/** Widest a column gets in the ASCII table; longer cells are cut. */
export const MAX_COLUMN_WIDTH = 50;

// One test per cell decides whether it needs any work: line breaks or tabs to escape, or
// surrogate pairs (emoji, rare CJK) that make code points differ from UTF-16 length.
const SPECIAL = /[\n\r\t\uD800-\uDFFF]/;
const SURROGATE = /[\uD800-\uDFFF]/;

// Newlines and tabs inside a value would break the table's lines, so they are shown escaped.
function flatten(text: string): string {
  return text.replace(/\r\n|[\n\r\t]/g, (match) => (match === '\t' ? '\\t' : '\\n'));
}

/**
 * A cell measured in code points, so that a surrogate pair is one character and is never split
 * in half. Plain text (nearly all of it) stays a string, measured by its length.
 */
type Cell = string | { text: string; points: string[] };

function cell(raw: string): Cell {
  if (!SPECIAL.test(raw)) return raw;
  const text = flatten(raw);
  return SURROGATE.test(text) ? { text, points: Array.from(text) } : text;
}

function width(value: Cell): number {
  return typeof value === 'string' ? value.length : value.points.length;
}

function fit(value: Cell, size: number): string {
  if (typeof value === 'string') return value.length > size ? value.slice(0, size) : value.padEnd(size);
  if (value.points.length > size) return value.points.slice(0, size).join('');
  return value.text + ' '.repeat(size - value.points.length);
}

/**
 * The original's ASCII table: header, a dashed separator joined by `-+-`, rows joined by ` | `,
 * columns as wide as their widest cell up to {@link MAX_COLUMN_WIDTH}, `NULL` for nulls.
 * `moreRows` is the exact number of rows that were not shown.
 */
export function formatTable(
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  moreRows: number,
): string {
  if (rows.length === 0 && moreRows === 0) return '(no rows returned)';
  const headers = columns.map(cell);
  const widths = headers.map((header) => Math.min(MAX_COLUMN_WIDTH, width(header)));
  const cells: Cell[][] = new Array<Cell[]>(rows.length);
  for (let rowIndex = 0; rowIndex < rows.length; rowIndex += 1) {
    const row = rows[rowIndex] as readonly unknown[];
    const line = new Array<Cell>(columns.length);
    for (let index = 0; index < columns.length; index += 1) {
      const value = cell(cellText(row[index]) ?? 'NULL');
      line[index] = value;
      const size = width(value);
      if (size > (widths[index] as number)) widths[index] = Math.min(MAX_COLUMN_WIDTH, size);
    }
    cells[rowIndex] = line;
  }
  const render = (line: readonly Cell[]): string => {
    let text = '';
    for (let index = 0; index < line.length; index += 1) {
      if (index > 0) text += ' | ';
      text += fit(line[index] as Cell, widths[index] as number);
    }
    return text.trimEnd();
  };
  const lines = [render(headers), widths.map((size) => '-'.repeat(size)).join('-+-')];
  for (const line of cells) lines.push(render(line));
  if (moreRows > 0) lines.push(`... (${moreRows} more ${moreRows === 1 ? 'row' : 'rows'})`);
  return lines.join('\n');
}
