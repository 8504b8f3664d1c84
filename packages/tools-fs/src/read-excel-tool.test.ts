import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseCsv } from './internal/csv.js';
import { columnLetter, createReadExcelTool, EXCEL_MAX_INFLATED_BYTES, formatNumber } from './read-excel-tool.js';
import { call, contextFor, temporaryDirectory } from './test-support/harness.js';
import { sheetXml, workbookMembers, writeZip } from './testing/xlsx-writer.js';

const tool = createReadExcelTool();
let dir: string;
let cleanup: () => Promise<void>;
let workbookBytes: Buffer;

beforeAll(async () => {
  const ExcelJS = ((await import('exceljs')) as unknown as { default: typeof import('exceljs') }).default;
  const workbook = new ExcelJS.Workbook();
  const data = workbook.addWorksheet('Data');
  data.addRow(['name', 'amount', 'secret', 'when']);
  data.addRow(['apple', 1.5, 'x', new Date(Date.UTC(2024, 0, 2))]);
  data.addRow(['pear', 2, 'y', new Date(Date.UTC(2024, 0, 2, 13, 45, 10))]);
  data.addRow(['hidden row', 1 / 3, 'z', null]);
  data.addRow(['total', { formula: 'B2+B3', result: 3.5 }, true, null]);
  data.getCell('A6').value = 'merged title';
  data.mergeCells('A6:C6');
  data.getRow(4).hidden = true;
  data.getColumn(3).hidden = true;
  workbook.addWorksheet('Empty');
  const narrow = workbook.addWorksheet('AllHidden');
  narrow.getCell('A1').value = 'x';
  narrow.getColumn(1).hidden = true;
  workbookBytes = Buffer.from(await workbook.xlsx.writeBuffer());
});

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory());
  await writeFile(join(dir, 'book.xlsx'), workbookBytes);
});
afterEach(async () => {
  await cleanup();
});

describe('read_excel', () => {
  it('shows what the model sees', () => {
    expect({ name: tool.name, description: tool.description, parameters: tool.parameters }).toMatchSnapshot();
  });

  it('lists sheets and describes them', async () => {
    expect(await call(tool, { path: 'book.xlsx', action: 'list_sheets' }, contextFor(dir))).toEqual({
      content: 'Sheets (3):\n  1. Data\n  2. Empty\n  3. AllHidden',
      success: true,
      metadata: { sheet_count: 3, sheets: ['Data', 'Empty', 'AllHidden'] },
    });
    expect((await call(tool, { path: 'book.xlsx', action: 'get_info' }, contextFor(dir))).content).toBe(
      [
        'File: book.xlsx',
        'Sheets: 3',
        '',
        '  Data:',
        '    Dimensions: A1:D6',
        '    Rows: 6, Columns: 4',
        '  Empty:',
        '    Dimensions: empty',
        '    Rows: 0, Columns: 0',
        '  AllHidden:',
        '    Dimensions: A1:A1',
        '    Rows: 1, Columns: 1',
      ].join('\n'),
    );
  });

  it('reads a sheet: computed formulas, ISO dates, numbers, merged cells, hidden rows and columns skipped', async () => {
    const result = await call(tool, { path: 'book.xlsx', action: 'read_sheet' }, contextFor(dir));
    expect(result.content).toBe(
      [
        'Sheet: Data (6 rows x 4 cols, showing 5 rows x 3 cols)',
        '',
        'A\tB\tD',
        'name\tamount\twhen',
        'apple\t1.5\t2024-01-02',
        'pear\t2\t2024-01-02T13:45:10',
        'total\t3.5\t',
        'merged title\t\t',
        '',
        '[1 rows hidden, 1 columns hidden]',
        '[Merged cells (value in the first cell): A6:C6]',
      ].join('\n'),
    );
    expect(result.metadata).toMatchObject({ hidden_rows: 1, hidden_cols: 1, rows_shown: 5 });
  });

  it('marks hidden rows with show_hidden and reads row ranges', async () => {
    const result = await call(
      tool,
      { path: 'book.xlsx', action: 'read_sheet', sheet: 'Data', start_row: 3, end_row: 5, show_hidden: true },
      contextFor(dir),
    );
    expect(result.content).toBe(
      [
        'Sheet: Data (6 rows x 4 cols, showing 3 rows x 4 cols)',
        '',
        'A\tB\tC\tD',
        'pear\t2\ty\t2024-01-02T13:45:10',
        '[H] hidden row\t0.3333\tz\t',
        'total\t3.5\tTrue\t',
        '',
        '[Showing rows 3-5 of 6, 1 rows hidden, 1 columns hidden]',
        '[Merged cells (value in the first cell): A6:C6]',
      ].join('\n'),
    );
  });

  it('accepts a sheet number, and reports every error of the original', async () => {
    expect(
      (await call(tool, { path: 'book.xlsx', action: 'read_sheet', sheet: '1', end_row: 1 }, contextFor(dir))).content,
    ).toContain('name\tamount\twhen');
    expect(
      (await call(tool, { path: 'book.xlsx', action: 'read_sheet', sheet: 'Nope' }, contextFor(dir))).content,
    ).toBe(
      `Sheet not found: 'sheet' must be one of "Data", "Empty", "AllHidden" (got "Nope"), or a number from 1 to 3`,
    );
    expect(
      (await call(tool, { path: 'book.xlsx', action: 'read_sheet', sheet: 'Empty' }, contextFor(dir))).content,
    ).toBe("Sheet 'Empty' is empty");
    expect(
      (await call(tool, { path: 'book.xlsx', action: 'read_sheet', sheet: 'AllHidden' }, contextFor(dir))).content,
    ).toBe("Sheet 'AllHidden' has no visible columns");
    expect((await call(tool, { path: 'book.xlsx', action: 'explode' as 'get_info' }, contextFor(dir))).content).toBe(
      `Unknown action: 'action' must be one of "list_sheets", "read_sheet", "get_info" (got "explode")`,
    );
    expect((await call(tool, { path: 'missing.xlsx', action: 'get_info' }, contextFor(dir))).content).toBe(
      `File not found: ${join(dir, 'missing.xlsx')}`,
    );
    expect((await call(tool, { path: '.', action: 'get_info' }, contextFor(dir))).content).toBe(`Not a file: ${dir}`);
    await writeFile(join(dir, 'broken.xlsx'), 'this is not a zip');
    expect((await call(tool, { path: 'broken.xlsx', action: 'get_info' }, contextFor(dir))).content).toMatch(
      /^Error reading Excel file: /,
    );
    await writeFile(join(dir, 'old.xls'), 'x');
    expect((await call(tool, { path: 'old.xls', action: 'get_info' }, contextFor(dir))).content).toBe(
      'Error reading Excel file: old.xls is not an Excel 97-2003 workbook (no OLE2 signature); if it is text exported as .xls (CSV, TSV, HTML), save or rename it with its real extension',
    );
  });

  it('reads Excel 97-2003 .xls workbooks (BIFF8): values, dates, hidden sheets and columns, merges', async () => {
    // Written with SheetJS's BIFF8 writer (no Excel or LibreOffice here to make one).
    const sheetjs = await import('@e965/xlsx');
    const book = sheetjs.utils.book_new();
    const data = sheetjs.utils.aoa_to_sheet(
      [
        ['name', 'amount', 'flag', 'when'],
        ['apple', 1.5, true, new Date(Date.UTC(2024, 0, 2))],
        ['pear', 1 / 3, false, null],
        ['merged title', null, null, null],
      ],
      { cellDates: true },
    );
    data['!cols'] = [{}, {}, { hidden: true }];
    data['!merges'] = [sheetjs.utils.decode_range('A4:C4')];
    sheetjs.utils.book_append_sheet(book, data, 'Data');
    sheetjs.utils.book_append_sheet(book, sheetjs.utils.aoa_to_sheet([['secret']]), 'Secret');
    book.Workbook = { Sheets: [{ Hidden: 0 }, { Hidden: 1 }] };
    await writeFile(join(dir, 'legacy.xls'), sheetjs.write(book, { type: 'buffer', bookType: 'biff8' }) as Buffer);

    expect((await call(tool, { path: 'legacy.xls', action: 'list_sheets' }, contextFor(dir))).content).toBe(
      'Sheets (2):\n  1. Data\n  2. Secret (hidden)',
    );
    expect((await call(tool, { path: 'legacy.xls', action: 'get_info' }, contextFor(dir))).content).toBe(
      'File: legacy.xls\nSheets: 2\n\n  Data:\n    Dimensions: A1:D4\n    Rows: 4, Columns: 4\n  Secret:\n    Dimensions: A1\n    Rows: 1, Columns: 1',
    );
    expect((await call(tool, { path: 'legacy.xls', action: 'read_sheet' }, contextFor(dir))).content).toBe(
      'Sheet: Data (4 rows x 4 cols, showing 4 rows x 3 cols)\n\nA\tB\tD\nname\tamount\twhen\napple\t1.5\t2024-01-02\npear\t0.3333\t\nmerged title\t\t\n\n[1 columns hidden]\n[Merged cells (value in the first cell): A4:C4]',
    );
    expect(
      (
        await call(
          tool,
          { path: 'legacy.xls', action: 'read_sheet', sheet: 'Data', show_hidden: true, end_row: 2 },
          contextFor(dir),
        )
      ).content,
    ).toContain('apple\t1.5\tTrue\t2024-01-02');
    // An .xlsx saved under .xls is read as what it is.
    await writeFile(join(dir, 'renamed.xls'), workbookBytes);
    expect((await call(tool, { path: 'renamed.xls', action: 'list_sheets' }, contextFor(dir))).content).toBe(
      'Sheets (3):\n  1. Data\n  2. Empty\n  3. AllHidden',
    );
  });

  it('reads CSV files, which the original documented but lacked', async () => {
    await writeFile(join(dir, 'people.csv'), '\uFEFFname,note\r\n"Smith, J","said ""hi""\nthen left"\r\nDoe,\r\n');
    expect((await call(tool, { path: 'people.csv', action: 'list_sheets' }, contextFor(dir))).content).toBe(
      'Sheets (1):\n  1. people.csv',
    );
    expect((await call(tool, { path: 'people.csv', action: 'read_sheet' }, contextFor(dir))).content).toBe(
      'Sheet: people.csv (3 rows x 2 cols)\n\nA\tB\nname\tnote\nSmith, J\tsaid "hi" then left\nDoe\t',
    );
  });

  it('formats numbers and columns like the original', () => {
    expect(formatNumber(3)).toBe('3');
    expect(formatNumber(2.5)).toBe('2.5');
    expect(formatNumber(1 / 3)).toBe('0.3333');
    expect(formatNumber(1.00004)).toBe('1');
    expect(columnLetter(1)).toBe('A');
    expect(columnLetter(27)).toBe('AA');
    expect(columnLetter(703)).toBe('AAA');
    expect(parseCsv('a,b\n1,2')).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
  });

  describe('bounded work on hostile workbooks', () => {
    /** Sheet XML of `bytes` bytes: the same row over and over, which deflate shrinks about a thousandfold. */
    const repetitiveSheet = (bytes: number): Buffer => {
      const head = Buffer.from(
        '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>',
      );
      const tail = Buffer.from('</sheetData></worksheet>');
      const row = '<row><c t="inlineStr"><is><t>bomb</t></is></c></row>';
      const body = Buffer.alloc(bytes - head.length - tail.length, row);
      return Buffer.concat([head, body, tail]);
    };

    it('reads a workbook written by the same zip writer the hostile cases use', async () => {
      // So the refusals below are about size, not about a malformed archive.
      await writeFile(join(dir, 'small.xlsx'), writeZip(workbookMembers(Buffer.from(sheetXml(1000)))));
      const result = await call(tool, { path: 'small.xlsx', action: 'read_sheet', end_row: 2 }, contextFor(dir));
      expect(result.success).toBe(true);
      expect(result.content).toContain('r2c1\tr2c2\tr2c3');
      expect(result.metadata).toMatchObject({ total_rows: 1000 });
    });

    it('refuses a workbook whose zip directory declares more XML than the limit, before parsing any', async () => {
      const inflated = EXCEL_MAX_INFLATED_BYTES + 8 * 1024 * 1024;
      const archive = writeZip(workbookMembers(repetitiveSheet(inflated)));
      expect(archive.length).toBeLessThan(inflated / 100);
      await writeFile(join(dir, 'bomb.xlsx'), archive);
      for (const action of ['list_sheets', 'get_info', 'read_sheet'] as const) {
        const result = await call(tool, { path: 'bomb.xlsx', action, end_row: 5 }, contextFor(dir));
        expect(result.success).toBe(false);
        expect(result.content).toMatch(
          /^Error reading Excel file: bomb\.xlsx inflates to 40 MB of XML \(0\.\d MB compressed; xl\/worksheets\/sheet1\.xml alone is 40 MB\), more than read_excel's limit of 32 MB\. Export the sheet you need to CSV/,
        );
      }
    });

    it('refuses a workbook whose zip member inflates to more than it declares (a lying zip bomb)', async () => {
      const archive = writeZip(workbookMembers(repetitiveSheet(EXCEL_MAX_INFLATED_BYTES * 2), 4096));
      await writeFile(join(dir, 'liar.xlsx'), archive);
      const result = await call(tool, { path: 'liar.xlsx', action: 'read_sheet', end_row: 5 }, contextFor(dir));
      expect(result).toEqual({
        content:
          'Error reading Excel file: liar.xlsx is not a valid .xlsx file: the zip member xl/worksheets/sheet1.xml declares 4096 bytes but holds more (a zip bomb?); read_excel does not load it',
        success: false,
      });
    });

    it('refuses a file that is not a zip archive with a message, not a parser error', async () => {
      await writeFile(join(dir, 'text.xlsx'), 'just text, not a workbook\n');
      const result = await call(tool, { path: 'text.xlsx', action: 'list_sheets' }, contextFor(dir));
      expect(result).toEqual({
        content: 'Error reading Excel file: text.xlsx is not a valid .xlsx file (it is not a zip archive)',
        success: false,
      });
    });
  });
});
