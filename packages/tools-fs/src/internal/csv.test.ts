import { describe, expect, it } from 'vitest';
import { parseCsv } from './csv.js';

describe('parseCsv', () => {
  it('keeps a final row that holds only an empty quoted field', () => {
    expect(parseCsv('name\n""')).toEqual([['name'], ['']]);
    expect(parseCsv('name\r\n""\r\n')).toEqual([['name'], ['']]);
    expect(parseCsv('""')).toEqual([['']]);
  });

  it('still makes no row of a trailing line end or of empty text', () => {
    expect(parseCsv('a,b\n1,2\n')).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
    expect(parseCsv('')).toEqual([]);
  });

  it('reads quoted separators, doubled quotes and newlines inside quotes', () => {
    expect(parseCsv('"x,y","say ""hi""","two\nlines"\n')).toEqual([['x,y', 'say "hi"', 'two\nlines']]);
  });
});
