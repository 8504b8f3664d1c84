import { mkdtemp, open, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CsvWriter, csvRecord } from './csv-writer.js';

describe('csvRecord (RFC 4180)', () => {
  it('quotes only fields with a comma, quote or line break, doubling quotes, and ends with CRLF', () => {
    expect(csvRecord(['plain', 'a,b', 'say "hi"', 'line\nbreak', null, 3])).toBe(
      'plain,"a,b","say ""hi""","line\nbreak",,3\r\n',
    );
  });

  it('keeps leading and trailing spaces and Unicode as they are', () => {
    expect(csvRecord([' x ', 'Motörhead', '東京'])).toBe(' x ,Motörhead,東京\r\n');
  });
});

describe('CsvWriter', () => {
  it('writes every record and counts the bytes, with a small buffer', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'rho-csv-'));
    const path = join(directory, 'out.csv');
    const file = await open(path, 'wx');
    const writer = new CsvWriter(file, 16);
    await writer.write([['id', 'name']]);
    for (let index = 0; index < 100; index += 1) await writer.write([[index, `n${index}`]]);
    await writer.flush();
    await file.close();
    const text = await readFile(path, 'utf8');
    expect(text.split('\r\n')).toHaveLength(102);
    expect(Buffer.byteLength(text)).toBe(writer.bytes);
  });
});
