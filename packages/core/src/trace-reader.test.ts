import { describe, expect, it } from 'vitest';
import type { RawTraceRecord, TraceNote } from './trace-reader.js';
import { isKnownRecord, readTrace, TraceReader } from './trace-reader.js';

const line = (record: Record<string, unknown>) => JSON.stringify(record);

/** Reads `bytes` pushed in the given pieces, then ends; what a follower would have seen. */
function readInPieces(bytes: Buffer, cuts: number[]) {
  const reader = new TraceReader();
  const records: RawTraceRecord[] = [];
  const skipped: TraceNote[] = [];
  const visitor = {
    record: (record: RawTraceRecord) => records.push(record),
    skipped: (note: TraceNote) => skipped.push(note),
  };
  let start = 0;
  for (const cut of [...cuts, bytes.length]) {
    reader.push(bytes.subarray(start, cut), visitor);
    start = cut;
  }
  const end = reader.end(visitor);
  return { records, skipped, ...end };
}

describe('readTrace', () => {
  it('reads records with their line numbers, skipping blank lines', () => {
    const text = `${line({ type: 'run_start', prompt: 'hi' })}\n\n${line({ type: 'message', role: 'user', content: 'hi' })}\n`;
    const contents = readTrace(text);
    expect(contents.records.map((record) => record.type)).toEqual(['run_start', 'message']);
    expect(contents.lines).toEqual([1, 3]);
    expect(contents).toMatchObject({ skipped: [], tornLastLine: false });
  });

  it('takes a last line that is not JSON for a torn record, also when blank lines follow it', () => {
    const whole = line({ type: 'run_start', prompt: 'hi' });
    expect(readTrace(`${whole}\n{"type": "message", "ro`)).toMatchObject({
      records: [{ type: 'run_start' }],
      skipped: [],
      tornLastLine: true,
    });
    expect(readTrace(`${whole}\n{"type": "message", "ro\n\n  \n`)).toMatchObject({ skipped: [], tornLastLine: true });
    // A record that is whole but lacks its newline is a record.
    expect(readTrace(`${whole}\n${whole}`)).toMatchObject({
      records: [{ type: 'run_start' }, { type: 'run_start' }],
      tornLastLine: false,
    });
  });

  it('skips a line that is not JSON in the middle (a torn record the next writer isolated), with a note', () => {
    const contents = readTrace(`{"type": "mess\n${line({ type: 'run_end', status: 'completed' })}\n`);
    expect(contents.tornLastLine).toBe(false);
    expect(contents.records.map((record) => record.type)).toEqual(['run_end']);
    expect(contents.skipped).toEqual([
      { kind: 'not_json', line: 1, reason: 'the line is not JSON', text: '{"type": "mess' },
    ]);
  });

  it('skips JSON that is not a record, and records of known types with the wrong shape, saying why', () => {
    const text = [
      '[1, 2]',
      '"text"',
      line({ no: 'type' }),
      line({ type: 7 }),
      line({ type: 'message', role: 'assistant', content: null, tool_calls: [null] }),
      line({ type: 'message', role: 'assistant', content: null, tool_calls: [{ id: '', function: { name: 'x' } }] }),
      line({ type: 'message', role: 'tool', content: 'orphan' }),
      line({ type: 'message', content: 'no role' }),
      line({ type: 'compact', trigger: 'auto', summary: 'S', kept: 'all' }),
      line({ type: 'compact', trigger: 'auto', summary: 'S', kept: [{ role: 'user', content: 'ok' }, 5] }),
      line({ type: 'future_record', anything: [1] }),
      line({ type: 'message', role: 'developer', content: "an unknown role is a consumer's choice" }),
    ].join('\n');
    const contents = readTrace(text);
    expect(
      contents.skipped.map(({ kind, line: number, type, reason }) => ({ kind, line: number, type, reason })),
    ).toEqual([
      { kind: 'not_a_record', line: 1, type: undefined, reason: 'the line is not a JSON object with a string "type"' },
      { kind: 'not_a_record', line: 2, type: undefined, reason: 'the line is not a JSON object with a string "type"' },
      { kind: 'not_a_record', line: 3, type: undefined, reason: 'the line is not a JSON object with a string "type"' },
      { kind: 'not_a_record', line: 4, type: undefined, reason: 'the line is not a JSON object with a string "type"' },
      { kind: 'invalid_record', line: 5, type: 'message', reason: 'tool_calls[0] is not an object' },
      { kind: 'invalid_record', line: 6, type: 'message', reason: 'tool_calls[0] has no id' },
      { kind: 'invalid_record', line: 7, type: 'message', reason: 'is a tool result without tool_call_id' },
      { kind: 'invalid_record', line: 8, type: 'message', reason: 'has no role' },
      { kind: 'invalid_record', line: 9, type: 'compact', reason: 'kept is not a list of messages' },
      { kind: 'invalid_record', line: 10, type: 'compact', reason: 'kept[1] is not an object' },
    ]);
    expect(contents.records.map((record) => [record.type, isKnownRecord(record)])).toEqual([
      ['future_record', false],
      ['message', true],
    ]);
    expect(contents.tornLastLine).toBe(false);
  });

  it('cuts the text of a note at 200 characters', () => {
    const [note] = readTrace(`not json ${'x'.repeat(500)}\n${line({ type: 'run_end' })}\n`).skipped;
    expect(note!.text).toHaveLength(203);
    expect(note!.text.endsWith('...')).toBe(true);
  });

  it('reads CRLF line ends, a byte-order mark and blank lines of spaces', () => {
    const records = [
      line({ type: 'run_start', prompt: 'p' }),
      line({ type: 'message', role: 'user', content: 'p' }),
      line({ type: 'llm_start', model: 'm' }),
    ];
    const text = `\uFEFF${records.join('\r\n')}\r\n   \r\n`;
    for (const source of [text, Buffer.from(text, 'utf8')]) {
      const contents = readTrace(source);
      expect(contents.records.map((record) => record.type)).toEqual(['run_start', 'message', 'llm_start']);
      expect(contents).toMatchObject({ skipped: [], tornLastLine: false });
      expect(readTrace(source, { ignoreTypes: ['llm_start'] }).records.map((record) => record.type)).toEqual([
        'run_start',
        'message',
      ]);
    }
  });

  it('passes over lines of ignored types without parsing them', () => {
    // The ignored line is not even valid JSON past its type: it is never parsed.
    const text = `{"type": "llm_start", "model": oops}\n${line({ type: 'run_end', status: 'completed' })}\n{"type":"tool_start"}\n`;
    const contents = readTrace(text, { ignoreTypes: ['llm_start', 'tool_start'] });
    expect(contents.records.map((record) => record.type)).toEqual(['run_end']);
    expect(contents.skipped).toEqual([]);
    // Written in another key order, an ignored type is parsed, and still not passed on.
    expect(readTrace(`{"ts": "t", "type": "llm_start"}\n`, { ignoreTypes: ['llm_start'] }).records).toEqual([]);
    // A torn line of an ignored type does not end in `}`: it is still recognised as torn.
    expect(
      readTrace(`${line({ type: 'run_end' })}\n{"type": "llm_start", "mo`, { ignoreTypes: ['llm_start'] }).tornLastLine,
    ).toBe(true);
  });
});

describe('TraceReader, incrementally', () => {
  const records = [
    line({ type: 'run_start', prompt: 'héllo ✓ 😀' }),
    line({ type: 'message', role: 'user', content: 'héllo ✓ 😀' }),
    'garbage that is not JSON',
    line({ type: 'message', role: 'assistant', content: null, tool_calls: [null] }),
    line({ type: 'run_end', status: 'completed' }),
  ];
  const bytes = Buffer.from(`${records.join('\n')}\n{"type": "message", "role": "to`, 'utf8');
  const whole = readInPieces(bytes, []);

  it('reads the same records whatever the pieces, a partial line or a character cut included', () => {
    expect(whole.records.map((record) => record.type)).toEqual(['run_start', 'message', 'run_end']);
    expect(whole.skipped.map((note) => [note.kind, note.line])).toEqual([
      ['not_json', 3],
      ['invalid_record', 4],
    ]);
    expect(whole.tornLastLine).toBe(true);
    for (let cut = 1; cut < bytes.length; cut += 1) {
      expect(readInPieces(bytes, [cut])).toEqual(whole);
    }
    expect(
      readInPieces(
        bytes,
        Array.from({ length: bytes.length - 1 }, (_, index) => index + 1),
      ),
    ).toEqual(whole);
  });

  it('hands on a line only once its newline arrives, and tracks the byte offset of the last whole line', () => {
    const reader = new TraceReader();
    const seen: RawTraceRecord[] = [];
    const visitor = { record: (record: RawTraceRecord) => seen.push(record) };
    const first = Buffer.from(`${records[0]}\n`, 'utf8');
    reader.push(first.subarray(0, 10), visitor);
    expect(seen).toEqual([]);
    expect(reader.position).toBe(0);
    reader.push(first.subarray(10), visitor);
    expect(seen).toEqual([{ type: 'run_start', prompt: 'héllo ✓ 😀' }]);
    expect(reader.position).toBe(first.length);
    // A line split inside a multi-byte character.
    const second = Buffer.from(`${records[1]}\n`, 'utf8');
    const inside = second.indexOf(Buffer.from('😀')) + 2;
    reader.push(second.subarray(0, inside), visitor);
    expect(seen).toHaveLength(1);
    expect(reader.position).toBe(first.length);
    reader.push(second.subarray(inside), visitor);
    expect(seen[1]).toEqual({ type: 'message', role: 'user', content: 'héllo ✓ 😀' });
    expect(reader.position).toBe(first.length + second.length);
    expect(reader.lines).toBe(2);
  });

  it('starts at a byte offset, and starts over after reset', () => {
    const text = `${records[0]}\n${records[1]}\n`;
    const offset = Buffer.byteLength(`${records[0]}\n`);
    const reader = new TraceReader({ offset });
    const seen: string[] = [];
    const visitor = { record: (record: RawTraceRecord, number: number) => seen.push(`${number}:${record.type}`) };
    reader.push(Buffer.from(text, 'utf8').subarray(offset), visitor);
    expect(seen).toEqual(['1:message']);
    expect(reader.position).toBe(Buffer.byteLength(text));
    reader.push(Buffer.from('{"type": "half'), visitor);
    reader.reset();
    expect(reader.position).toBe(0);
    reader.push(Buffer.from(text, 'utf8'), visitor);
    expect(seen).toEqual(['1:message', '1:run_start', '2:message']);
    expect(reader.end(visitor)).toEqual({ tornLastLine: false });
  });

  it('reports a line that is not JSON once a later line shows it is not the end', () => {
    const reader = new TraceReader();
    const skipped: TraceNote[] = [];
    const visitor = { record: () => {}, skipped: (note: TraceNote) => skipped.push(note) };
    reader.push(Buffer.from('not json\n'), visitor);
    // It may yet be the torn end of the trace.
    expect(skipped).toEqual([]);
    reader.push(Buffer.from('\n'), visitor);
    expect(skipped).toEqual([]);
    reader.push(Buffer.from(`${line({ type: 'run_end' })}\n`), visitor);
    expect(skipped.map((note) => [note.kind, note.line, note.text])).toEqual([['not_json', 1, 'not json']]);
    expect(reader.end(visitor).tornLastLine).toBe(false);
  });
});

describe('TraceReader with maxLineBytes', () => {
  const record = (n: number) => `{"type":"status","status":"running","n":${n}}\n`;

  function collect(limit: number, chunks: (string | Uint8Array)[]) {
    const reader = new TraceReader({ maxLineBytes: limit });
    const records: RawTraceRecord[] = [];
    const skipped: TraceNote[] = [];
    const visitor = {
      record: (value: RawTraceRecord) => records.push(value),
      skipped: (note: TraceNote) => skipped.push(note),
    };
    for (const chunk of chunks) reader.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk, visitor);
    const end = reader.end(visitor);
    return { records, skipped, end, position: reader.position };
  }

  it('passes over a line longer than the limit that arrives in many pieces, without keeping it, and reads on', () => {
    const big = `{"type":"tool_end","output":"${'x'.repeat(5_000)}"}\n`;
    const pieces = [
      record(1),
      ...Array.from({ length: 10 }, (_, index) => big.slice(index * 500, (index + 1) * 500)),
      big.slice(5_000),
      record(2),
    ];
    const { records, skipped, position } = collect(1_000, pieces);
    expect(records.map((value) => value['n'])).toEqual([1, 2]);
    expect(skipped).toHaveLength(1);
    expect(skipped[0]).toMatchObject({ kind: 'too_large', line: 2 });
    expect(skipped[0]!.reason).toContain(
      `the line is ${Buffer.byteLength(big)} bytes, over the reader's limit of 1000`,
    );
    expect(skipped[0]!.text.startsWith('{"type":"tool_end","output":"xxx')).toBe(true);
    expect(position).toBe(Buffer.byteLength(record(1) + big + record(2)));
  });

  it('passes over a too-long line inside one chunk, between records, and one cut off at the end', () => {
    const big = `{"type":"tool_end","output":"${'y'.repeat(3_000)}"}\n`;
    const { records, skipped, end } = collect(1_000, [record(1) + big + record(2) + big.slice(0, 2_000)]);
    expect(records.map((value) => value['n'])).toEqual([1, 2]);
    expect(skipped.map((note) => [note.kind, note.line])).toEqual([
      ['too_large', 2],
      ['too_large', 4],
    ]);
    expect(end.tornLastLine).toBe(false);
  });

  it('reads lines up to the limit as usual, the same as a reader without one', () => {
    const text = Array.from({ length: 50 }, (_, index) => record(index)).join('');
    const bounded = collect(60, [text.slice(0, 333), text.slice(333)]);
    expect(bounded.skipped).toEqual([]);
    expect(bounded.records).toEqual(readTrace(text).records);
  });
});
