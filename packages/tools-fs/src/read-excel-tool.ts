import { basename, extname } from 'node:path';
import { defineTool, type ToolResult } from '@rho/core';
import { mustBeOneOf } from '@rho/core/internal';
import type { CellValue, Worksheet } from 'exceljs';
import { parseCsv } from './internal/csv.js';
import { backendOf, errorCode, errorMessage, resolvePath } from './internal/paths.js';
import { failure } from './internal/result.js';
import { checkWorkbookBounds } from './internal/xlsx-bounds.js';
import type { FsToolOptions } from './read-tool.js';
import { readPathRefusal, viewOf } from './internal/read-path.js';

/** Rows shown when `end_row` is not given. */
export const EXCEL_DEFAULT_ROWS = 500;
/** Largest workbook or CSV file loaded. */
export const EXCEL_MAX_BYTES = 100 * 1024 * 1024;
/**
 * Most bytes an .xlsx workbook may inflate to (all its zip members together). exceljs builds the
 * whole workbook in memory, at roughly 15-20 times the XML's size, so this bounds the memory one
 * call can take; a zip bomb is refused before any XML is parsed.
 */
export const EXCEL_MAX_INFLATED_BYTES = 32 * 1024 * 1024;

const EXCEL_ACTIONS: readonly string[] = ['list_sheets', 'read_sheet', 'get_info'];

/** A sheet reduced to what the tool shows: cell texts, hidden rows and columns, merged ranges. */
interface SheetView {
  name: string;
  hidden: boolean;
  rowCount: number;
  columnCount: number;
  dimensions: string | undefined;
  cell(row: number, column: number): string;
  rowHidden(row: number): boolean;
  columnHidden(column: number): boolean;
  merges: string[];
}

interface WorkbookView {
  sheets: SheetView[];
  active: number;
}

/**
 * `read_excel`: sheets of an `.xlsx` workbook (exceljs, loaded the first time it is needed), an
 * Excel 97-2003 `.xls` workbook (SheetJS, likewise) or a `.csv` file: list them, describe them, or read rows as tab-separated text with formulas shown
 * as their computed values and dates as ISO dates.
 */
export function createReadExcelTool(options: FsToolOptions = {}) {
  return defineTool({
    name: 'read_excel',
    description:
      'Read Excel (.xlsx, and .xls of Excel 97-2003) or CSV files. action "list_sheets" lists the sheets; "get_info" shows each sheet\'s ' +
      'dimensions, rows and columns; "read_sheet" returns rows as tab-separated values under a header of column ' +
      `letters, ${EXCEL_DEFAULT_ROWS} rows at a time (use start_row and end_row to page). Formulas show their computed ` +
      'values, dates are ISO dates, and merged ranges are listed. Hidden rows and columns are skipped unless ' +
      'show_hidden is true, in which case hidden rows are marked "[H] ".',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Path of the .xlsx, .xls or .csv file.' },
        action: {
          type: 'string',
          enum: ['list_sheets', 'read_sheet', 'get_info'],
          description: 'What to do: list_sheets, read_sheet or get_info.',
        },
        sheet: {
          type: 'string',
          description: 'Sheet name, or its 1-based number as listed by list_sheets (default: the active sheet).',
        },
        start_row: { type: 'integer', description: 'First row to read, 1-based (default 1).' },
        end_row: { type: 'integer', description: `Last row to read (default start_row + ${EXCEL_DEFAULT_ROWS - 1}).` },
        show_hidden: { type: 'boolean', description: 'Include hidden rows and columns (default false).' },
      },
      required: ['path', 'action'],
      additionalProperties: false,
    },
    annotations: { readOnly: true },
    async handle({ arguments: args }, context): Promise<ToolResult> {
      if (!args.path) return failure('No path provided');
      const backend = backendOf(options.backend, context);
      const path = await resolvePath(backend, context.workingDir, args.path);
      const refusal = await readPathRefusal(backend, path, viewOf(options.view, backend, context));
      if (refusal !== undefined) return refusal;
      if (!EXCEL_ACTIONS.includes(args.action))
        return failure(`Unknown action: ${mustBeOneOf('action', EXCEL_ACTIONS, args.action)}`);
      let workbook: WorkbookView;
      try {
        const info = await backend.stat(path);
        if (info.type !== 'file') return failure(`Not a file: ${path}`);
        const bytes = await backend.readFile(path, { maxBytes: EXCEL_MAX_BYTES });
        workbook = await loadWorkbook(path, bytes);
      } catch (error) {
        const code = errorCode(error);
        if (code === 'ENOENT') return failure(`File not found: ${path}`);
        if (code === 'EACCES' || code === 'EPERM') return failure(`Permission denied: ${path}`);
        if (code === 'EFBIG')
          return failure(`Error reading Excel file: ${path} is larger than ${EXCEL_MAX_BYTES / 1024 / 1024} MB`);
        return failure(`Error reading Excel file: ${errorMessage(error)}`);
      }
      switch (args.action) {
        case 'list_sheets':
          return {
            content: [
              `Sheets (${workbook.sheets.length}):`,
              ...workbook.sheets.map(
                (sheet, index) => `  ${index + 1}. ${sheet.name}${sheet.hidden ? ' (hidden)' : ''}`,
              ),
            ].join('\n'),
            success: true,
            metadata: { sheet_count: workbook.sheets.length, sheets: workbook.sheets.map((sheet) => sheet.name) },
          };
        case 'get_info': {
          const lines = [`File: ${basename(path)}`, `Sheets: ${workbook.sheets.length}`, ''];
          for (const sheet of workbook.sheets) {
            lines.push(
              `  ${sheet.name}:`,
              `    Dimensions: ${sheet.dimensions ?? 'empty'}`,
              `    Rows: ${sheet.rowCount}, Columns: ${sheet.columnCount}`,
            );
          }
          return { content: lines.join('\n'), success: true, metadata: { sheet_count: workbook.sheets.length } };
        }
        default:
          return readSheet(workbook, args);
      }
    },
  });
}

function readSheet(
  workbook: WorkbookView,
  args: { sheet?: string; start_row?: number; end_row?: number; show_hidden?: boolean },
): ToolResult {
  let sheet: SheetView | undefined;
  if (args.sheet === undefined || args.sheet === '') {
    sheet = workbook.sheets[workbook.active] ?? workbook.sheets[0];
  } else {
    sheet = workbook.sheets.find((candidate) => candidate.name === args.sheet);
    if (sheet === undefined && /^\d+$/.test(args.sheet)) sheet = workbook.sheets[Number(args.sheet) - 1];
  }
  if (sheet === undefined) {
    const names = workbook.sheets.map((candidate) => candidate.name);
    return failure(
      `Sheet not found: ${mustBeOneOf('sheet', names, args.sheet ?? '')}, or a number from 1 to ${names.length}`,
    );
  }
  if (sheet.rowCount === 0 || sheet.columnCount === 0) return failure(`Sheet '${sheet.name}' is empty`);
  const showHidden = args.show_hidden ?? false;
  const columns: number[] = [];
  let hiddenColumns = 0;
  for (let column = 1; column <= sheet.columnCount; column += 1) {
    if (sheet.columnHidden(column)) {
      hiddenColumns += 1;
      if (!showHidden) continue;
    }
    columns.push(column);
  }
  if (columns.length === 0) return failure(`Sheet '${sheet.name}' has no visible columns`);
  const start = Math.max(1, args.start_row ?? 1);
  const end = Math.min(args.end_row ?? start + EXCEL_DEFAULT_ROWS - 1, sheet.rowCount);
  const lines: string[] = [columns.map(columnLetter).join('\t')];
  let shownRows = 0;
  let hiddenRows = 0;
  for (let row = start; row <= end; row += 1) {
    const hidden = sheet.rowHidden(row);
    if (hidden) {
      hiddenRows += 1;
      if (!showHidden) continue;
    }
    const text = columns.map((column) => sheet.cell(row, column)).join('\t');
    lines.push(hidden ? `[H] ${text}` : text);
    shownRows += 1;
  }
  const shownAll = shownRows === sheet.rowCount && columns.length === sheet.columnCount;
  const summary = `Sheet: ${sheet.name} (${sheet.rowCount} rows x ${sheet.columnCount} cols${
    shownAll ? '' : `, showing ${shownRows} rows x ${columns.length} cols`
  })`;
  const footerParts: string[] = [];
  if (start > 1 || end < sheet.rowCount) footerParts.push(`Showing rows ${start}-${end} of ${sheet.rowCount}`);
  if (hiddenRows > 0) footerParts.push(`${hiddenRows} rows hidden`);
  if (hiddenColumns > 0) footerParts.push(`${hiddenColumns} columns hidden`);
  const mergeNote =
    sheet.merges.length > 0
      ? `\n[Merged cells (value in the first cell): ${sheet.merges.slice(0, 50).join(', ')}]`
      : '';
  const footer = footerParts.length > 0 ? `\n\n[${footerParts.join(', ')}]` : '';
  return {
    content: `${summary}\n\n${lines.join('\n')}${footer}${mergeNote}`,
    success: true,
    metadata: {
      sheet: sheet.name,
      start_row: start,
      end_row: end,
      total_rows: sheet.rowCount,
      total_cols: sheet.columnCount,
      rows_shown: shownRows,
      hidden_rows: hiddenRows,
      hidden_cols: hiddenColumns,
    },
  };
}

async function loadWorkbook(path: string, bytes: Uint8Array): Promise<WorkbookView> {
  const extension = extname(path).toLowerCase();
  if (extension === '.csv' || extension === '.tsv') {
    const text = new TextDecoder('utf-8').decode(bytes).replace(/^\uFEFF/, '');
    return { sheets: [csvSheet(basename(path), parseCsv(text, extension === '.tsv' ? '\t' : ','))], active: 0 };
  }
  // Some programs save .xlsx under .xls: the zip signature tells.
  if (extension === '.xls' && !(bytes[0] === 0x50 && bytes[1] === 0x4b)) return loadXlsWorkbook(path, bytes);
  // Before any XML is parsed: a workbook that inflates beyond the limit is refused.
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  checkWorkbookBounds(buffer, basename(path), EXCEL_MAX_INFLATED_BYTES);
  // exceljs is CommonJS: under Node's ESM loader its exports arrive as `default`.
  const module = (await import('exceljs')) as unknown as { default: typeof import('exceljs') };
  const workbook = new module.default.Workbook();
  await workbook.xlsx.load(buffer as unknown as ArrayBuffer);
  const active = workbook.views?.[0]?.activeTab ?? 0;
  return { sheets: workbook.worksheets.map(excelSheet), active };
}

/**
 * An Excel 97-2003 (.xls, BIFF) workbook through SheetJS (`@e965/xlsx`, loaded only here: exceljs
 * reads only .xlsx). Values are the cached results Excel saved, as for .xlsx.
 */
async function loadXlsWorkbook(path: string, bytes: Uint8Array): Promise<WorkbookView> {
  // SheetJS reads anything (text becomes a one-column sheet): only an OLE2 compound file is taken.
  if (!OLE2_SIGNATURE.every((byte, index) => bytes[index] === byte)) {
    throw new Error(
      `${basename(path)} is not an Excel 97-2003 workbook (no OLE2 signature); if it is text exported as .xls (CSV, TSV, HTML), save or rename it with its real extension`,
    );
  }
  const sheetjs = await import('@e965/xlsx');
  let workbook: import('@e965/xlsx').WorkBook;
  try {
    workbook = sheetjs.read(bytes, {
      type: 'array',
      cellDates: true,
      cellFormula: false,
      cellHTML: false,
      cellStyles: true,
    });
  } catch (error) {
    throw new Error(
      `${basename(path)} could not be read as an Excel 97-2003 workbook (${errorMessage(error)}); if it is another format renamed .xls, give it its real extension (.xlsx, .csv)`,
      { cause: error },
    );
  }
  const sheets = workbook.SheetNames.map((name, index): SheetView => {
    const sheet = workbook.Sheets[name]!;
    const range = sheet['!ref'] === undefined ? undefined : sheetjs.utils.decode_range(sheet['!ref']);
    const rowCount = range === undefined ? 0 : range.e.r + 1;
    const columnCount = range === undefined ? 0 : range.e.c + 1;
    return {
      name,
      hidden: (workbook.Workbook?.Sheets?.[index]?.Hidden ?? 0) !== 0,
      rowCount,
      columnCount,
      dimensions: range === undefined ? undefined : sheetjs.utils.encode_range(range),
      cell(row, column) {
        const cell = sheet[sheetjs.utils.encode_cell({ r: row - 1, c: column - 1 })] as
          import('@e965/xlsx').CellObject | undefined;
        if (cell === undefined) return '';
        // An error cell's value is its code; its text is what Excel shows (#DIV/0!).
        if (cell.t === 'e') return cell.w ?? '#ERROR';
        return formatValue(cell.v as CellValue | undefined);
      },
      rowHidden: (row) => sheet['!rows']?.[row - 1]?.hidden === true,
      columnHidden: (column) => sheet['!cols']?.[column - 1]?.hidden === true,
      merges: (sheet['!merges'] ?? []).map((merge) => sheetjs.utils.encode_range(merge)),
    };
  });
  const views = (workbook.Workbook as { WBView?: { activeTab?: number }[] } | undefined)?.WBView;
  return { sheets, active: views?.[0]?.activeTab ?? 0 };
}

const OLE2_SIGNATURE = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

function csvSheet(name: string, rows: string[][]): SheetView {
  const columnCount = rows.reduce((most, row) => Math.max(most, row.length), 0);
  return {
    name,
    hidden: false,
    rowCount: rows.length,
    columnCount,
    dimensions: rows.length === 0 ? undefined : `A1:${columnLetter(columnCount)}${rows.length}`,
    cell: (row, column) => formatValue(rows[row - 1]?.[column - 1] ?? ''),
    rowHidden: () => false,
    columnHidden: () => false,
    merges: [],
  };
}

function excelSheet(worksheet: Worksheet): SheetView {
  const empty = worksheet.actualRowCount === 0;
  const merges = Object.values((worksheet as unknown as { _merges?: Record<string, { range?: string }> })._merges ?? {})
    .map((range) => range.range)
    .filter((range): range is string => typeof range === 'string');
  return {
    name: worksheet.name,
    hidden: worksheet.state !== 'visible',
    rowCount: empty ? 0 : worksheet.rowCount,
    columnCount: empty ? 0 : worksheet.columnCount,
    dimensions: empty ? undefined : (worksheet.dimensions as unknown as { range?: string } | undefined)?.range,
    cell(row, column) {
      const cell = worksheet.findCell(row, column);
      if (cell === undefined) return '';
      // Only the first cell of a merged range carries its value; the others read as empty.
      if (cell.isMerged && cell.master.address !== cell.address) return '';
      return formatValue(cell.value);
    },
    rowHidden: (row) => worksheet.findRow(row)?.hidden ?? false,
    columnHidden: (column) => worksheet.getColumn(column).hidden,
    merges,
  };
}

/** A cell value as the original printed it; formulas show their cached result, dates ISO. */
export function formatValue(value: CellValue | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return formatNumber(value);
  if (typeof value === 'string') return value.replace(/[\t\n\r]+/g, ' ');
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (value instanceof Date) return formatDate(value);
  if (typeof value === 'object') {
    if ('result' in value || 'formula' in value || 'sharedFormula' in value) {
      const result = (value as { result?: unknown }).result;
      if (result !== null && typeof result === 'object' && 'error' in result)
        return String((result as { error: unknown }).error);
      return formatValue(result as CellValue | undefined);
    }
    if ('richText' in value)
      return value.richText
        .map((part) => part.text)
        .join('')
        .replace(/[\t\n\r]+/g, ' ');
    if ('error' in value) return String(value.error);
    if ('text' in value) return formatValue((value as { text: CellValue }).text);
  }
  return String(value);
}

/** Integral numbers without decimals; others with up to four decimals, trailing zeros dropped. */
export function formatNumber(value: number): string {
  if (Number.isInteger(value)) return String(value);
  if (!Number.isFinite(value)) return String(value);
  return value.toFixed(4).replace(/0+$/, '').replace(/\.$/, '');
}

function formatDate(date: Date): string {
  if (Number.isNaN(date.getTime())) return '';
  const iso = date.toISOString();
  // Excel stores wall-clock times; exceljs hands them over as UTC dates.
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso.slice(0, 19);
}

/** 1 → A, 27 → AA. */
export function columnLetter(column: number): string {
  let letters = '';
  for (let rest = column; rest > 0; rest = Math.floor((rest - 1) / 26)) {
    letters = String.fromCharCode(65 + ((rest - 1) % 26)) + letters;
  }
  return letters;
}
