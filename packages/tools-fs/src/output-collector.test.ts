import { describe, expect, it } from 'vitest';
import { LineSplitter } from './internal/line-splitter.js';
import { OutputCollector } from './internal/output-collector.js';

describe('OutputCollector', () => {
  it('keeps everything while it fits', () => {
    const collector = new OutputCollector(4, 4);
    collector.push(Buffer.from('abc'));
    collector.push(Buffer.from('defgh'));
    expect(collector.text()).toBe('abcdefgh');
    expect(collector.omittedBytes).toBe(0);
  });

  it('keeps the exact head and tail of a long stream fed in uneven chunks', () => {
    const data = Buffer.from(
      Array.from({ length: 100_000 }, (_, index) => String.fromCharCode(97 + (index % 26))).join(''),
    );
    for (const chunkSize of [1, 7, 999, 4096, 70_000]) {
      const collector = new OutputCollector(1000, 1500);
      for (let offset = 0; offset < data.length; offset += chunkSize)
        collector.push(data.subarray(offset, offset + chunkSize));
      expect(collector.totalBytes).toBe(100_000);
      expect(collector.omittedBytes).toBe(97_500);
      expect(collector.text()).toBe(
        `${data.subarray(0, 1000).toString()}\n\n[... 97500 bytes of output omitted ...]\n\n${data.subarray(98_500).toString()}`,
      );
    }
  });
});

describe('LineSplitter', () => {
  it('splits across chunks, caps long lines and flushes a last line without newline', () => {
    const lines: [string, boolean][] = [];
    const splitter = new LineSplitter((line, cut) => lines.push([line, cut]), 5);
    splitter.push(Buffer.from('ab\ncd'));
    splitter.push(Buffer.from('ef\n0123456789\nlast'));
    splitter.end();
    expect(lines).toEqual([
      ['ab', false],
      ['cdef', false],
      ['01234', true],
      ['last', false],
    ]);
  });
});
