import { describe, expect, it } from 'vitest';
import { formatTable } from './format-table.js';

describe('formatTable', () => {
  it('lays out header, separator and rows like the original', () => {
    const text = formatTable(
      ['id', 'name'],
      [
        [1, 'AC/DC'],
        [2, null],
      ],
      0,
    );
    expect(text).toBe(['id | name', '---+------', '1  | AC/DC', '2  | NULL'].join('\n'));
  });

  it('states the exact number of rows left out (the original always said 1)', () => {
    expect(
      formatTable(['n'], [[1], [2]], 273)
        .split('\n')
        .at(-1),
    ).toBe('... (273 more rows)');
    expect(
      formatTable(['n'], [[1]], 1)
        .split('\n')
        .at(-1),
    ).toBe('... (1 more row)');
  });

  it('says so when there are no rows', () => {
    expect(formatTable(['a'], [], 0)).toBe('(no rows returned)');
  });

  it('caps columns at 50 characters and never splits a surrogate pair', () => {
    const long = '😀'.repeat(60);
    const [, , row] = formatTable(['emoji'], [[long]], 0).split('\n');
    expect(row).toBe('😀'.repeat(50));
  });

  it('escapes line breaks and tabs so a value cannot break the table', () => {
    const text = formatTable(['note'], [['a\nb\tc']], 0);
    expect(text.split('\n')).toHaveLength(3);
    expect(text).toContain('a\\nb\\tc');
  });

  it('renders bigint, dates, binary and JSON values', () => {
    const text = formatTable(
      ['big', 'date', 'bytes', 'json'],
      [[12345678901234567890n, new Date('2024-01-02T03:04:05.000Z'), Buffer.from([0, 255]), { a: [1, 2] }]],
      0,
    );
    expect(text).toContain('12345678901234567890');
    expect(text).toContain('2024-01-02T03:04:05.000Z');
    expect(text).toContain('\\x00ff');
    expect(text).toContain('{"a":[1,2]}');
  });
});
