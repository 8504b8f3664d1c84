// How a tool's result is shown under its call, for its kind: a command's output, a file's lines,
// a write's summary, a search's lines, a SQL table, an error; one function for a live run, the REPL,
// `rho watch` and the monitor (all through the event renderer). Pure: it returns lines, never prints.
import { clipWords, outputPreview } from './format.js';
import type { styles } from './terminal.js';

/** What the event renderer knows of a finished call. */
export interface ToolResultInput {
  name: string;
  /** The tool message's content (what the model saw). */
  content: string;
  /** The `tool_end` record's metadata, when it has one. */
  metadata?: Record<string, unknown> | undefined;
  success: boolean;
  /** The diff of an edit or write, when one could be made. */
  diff?: string[] | undefined;
}

/** The view of a result: `headline` follows the tool's name on its ✓/✗ line; `lines` go under it. */
export interface ToolResultView {
  /** `exit 2`, or a failure's message (red); undefined: nothing after the name. */
  headline?: string;
  /** Lines shown under the result line, each already styled, without indent. */
  lines: string[];
}

type Style = ReturnType<typeof styles>;

const OMITTED = /\[\.\.\. (\d+) bytes of output omitted \.\.\.\]/;
const READ_LINE = /^ *\d+ {2}/;
const READ_FOOTER = /^\[Showing lines (\d+)-(\d+) of (\d+)\]$/;

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function parseJson(content: string): unknown {
  const text = content.trim();
  if (!text.startsWith('{')) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** `lines` bounded to `max`, each clipped to `width`, with `… K more lines` after them. */
function bounded(text: string, max: number, width: number, style: Style): string[] {
  const preview = outputPreview(text, max, width);
  const shown = preview.lines.map((line) => style.dim(`│ ${line}`));
  if (preview.more > 0) shown.push(style.dim(`… ${preview.more} more line${preview.more === 1 ? '' : 's'}`));
  return shown;
}

/** The cell of a table row as text: `NULL` for null, JSON for objects. */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return value.replace(/[\n\r\t]/g, ' ');
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/** `{columns: [...], rows: [[...]] | [{...}]}` as an aligned table (header, dashes, rows). */
export function alignedTable(columns: string[], rows: unknown[]): string[] {
  const cells = rows.map((row) =>
    Array.isArray(row)
      ? columns.map((_, index) => cellText(row[index]))
      : columns.map((column) => cellText(record(row)?.[column])),
  );
  const widths = columns.map((column, index) =>
    Math.min(50, Math.max(column.length, ...cells.map((row) => row[index]!.length))),
  );
  const line = (values: string[]) =>
    values
      .map((value, index) =>
        value.length > widths[index]! ? value.slice(0, widths[index]) : value.padEnd(widths[index]!),
      )
      .join(' | ')
      .trimEnd();
  return [line(columns), widths.map((size) => '-'.repeat(size)).join('-+-'), ...cells.map(line)];
}

function bashView(parsed: Record<string, unknown>, input: ToolResultInput, max: number, width: number, style: Style) {
  const output = typeof parsed['output'] === 'string' ? parsed['output'] : '';
  const meta = { ...record(parsed['metadata']), ...input.metadata };
  const exit = typeof meta['exit_code'] === 'number' ? meta['exit_code'] : undefined;
  const lines = output.trim() === '' ? [style.dim('│ (no output)')] : bounded(output, max, width, style);
  const omitted = OMITTED.exec(output);
  const notes: string[] = [];
  if (omitted !== null) notes.push(`output truncated: ${omitted[1]} bytes omitted from the middle`);
  if (meta['timed_out'] === true) notes.push('timed out');
  if (meta['cancelled'] === true) notes.push('cancelled');
  if (Array.isArray(meta['limits_reached'])) notes.push(`limits reached: ${meta['limits_reached'].join(', ')}`);
  for (const note of notes) lines.push(style.yellow(`(${note})`));
  return {
    ...(exit !== undefined && exit !== 0 ? { headline: style.red(`exit ${exit}`) } : {}),
    lines,
  };
}

function readView(content: string, max: number, width: number, style: Style): ToolResultView {
  const all = content.replace(/\s+$/, '').split('\n');
  const footer = READ_FOOTER.exec(all.at(-1) ?? '');
  if (footer !== null) all.splice(all.length - (all.at(-2) === '' ? 2 : 1));
  if (!all.every((line) => line === '' || READ_LINE.test(line))) return { lines: bounded(content, max, width, style) };
  const text = all.map((line) => line.replace(READ_LINE, '')).join('\n');
  const lines = bounded(text, max, width, style);
  if (footer !== null) lines.push(style.dim(`(lines ${footer[1]}-${footer[2]} of ${footer[3]})`));
  return { lines };
}

/**
 * The lines of one finished call, bounded to `max` lines of output (and a `… K more lines`),
 * each clipped to `width`. Anything of no known kind is shown as its text (JSON as written).
 */
export function toolResultView(input: ToolResultInput, max: number, width: number, style: Style): ToolResultView {
  const { name, content, success } = input;
  const meta = input.metadata ?? {};
  const parsed = record(parseJson(content));
  // A command's result: its output, the exit code when it is not 0, a note when output was cut.
  if (parsed !== undefined && typeof parsed['output'] === 'string' && record(parsed['metadata']) !== undefined)
    return bashView(parsed, input, max, width, style);
  if (!success) {
    const message = content.split('\n').find((line) => line.trim() !== '') ?? 'failed';
    return { headline: style.red(clipWords(message.trim(), Math.max(40, width - name.length - 10))), lines: [] };
  }
  if ((name === 'edit' || name === 'write') && input.diff !== undefined && input.diff.length > 0)
    return { lines: input.diff };
  if (name === 'edit' || name === 'write') {
    const summary = content.split('\n').find((line) => line.trim() !== '') ?? '';
    return { lines: summary === '' ? [] : [style.dim(`│ ${clipWords(summary, width - 2)}`)] };
  }
  // A table given as columns and rows (JSON), or one the tool already aligned (metadata.columns).
  const columns = parsed?.['columns'] ?? meta['columns'];
  if (Array.isArray(columns) && columns.every((column) => typeof column === 'string')) {
    const rows = parsed?.['rows'];
    const text = Array.isArray(rows) ? alignedTable(columns, rows).join('\n') : content;
    const lines = bounded(text, max, width, style);
    const total = typeof meta['total_rows'] === 'number' ? meta['total_rows'] : undefined;
    const shown = typeof meta['row_count'] === 'number' ? meta['row_count'] : undefined;
    if (meta['truncated'] === true && total !== undefined && shown !== undefined)
      lines.push(style.yellow(`(${shown} of ${total} rows returned)`));
    return { lines };
  }
  if (name === 'read') return readView(content, max, width, style);
  // grep, glob, list and anything else: its lines as written.
  const lines = bounded(content, max, width, style);
  if (name === 'grep' && meta['truncated'] === true) lines.push(style.yellow('(matches truncated)'));
  return { lines };
}
