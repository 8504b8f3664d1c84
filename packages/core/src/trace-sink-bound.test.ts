import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TraceRecord } from './events.js';
import { State } from './state.js';
import { JsonlTraceSink, MAX_TRACE_RECORD_BYTES } from './trace-sink.js';

// Issue 33: an endless model stream left a 537 MB trace record that export, watch and resume then
// needed 1.1-1.6 GB to read. A record in the trace now never exceeds a documented size: a longer
// one is written cut, with the whole of it in a side file.
describe('JsonlTraceSink record bound', () => {
  it('writes a record over the limit cut, with notes and the whole record in spill/', () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-sink-'));
    const path = join(directory, 'trace.jsonl');
    const sink = new JsonlTraceSink(path, { maxRecordBytes: 100_000 });
    const big = 'x'.repeat(1_000_000);
    sink.append({ type: 'message', role: 'user', content: 'hello', ts: '2026-11-28T00:00:00.000Z' } as TraceRecord);
    sink.append({ type: 'message', role: 'assistant', content: big, ts: '2026-11-28T00:00:01.000Z' } as TraceRecord);
    sink.append({ type: 'message', role: 'user', content: 'after', ts: '2026-11-28T00:00:02.000Z' } as TraceRecord);
    sink.close();
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    for (const line of lines) expect(Buffer.byteLength(line) + 1).toBeLessThanOrEqual(100_000);
    const cut = JSON.parse(lines[1]!) as { content: string; spilled: { file: string; bytes: number } };
    expect(cut.content.startsWith('x'.repeat(1000))).toBe(true);
    expect(cut.content).toContain(`more characters: the whole record is in ${cut.spilled.file} beside the trace]`);
    const spilled = readdirSync(join(directory, 'spill'));
    expect(spilled).toHaveLength(1);
    const whole = JSON.parse(readFileSync(join(directory, cut.spilled.file), 'utf8')) as { content: string };
    expect(whole.content).toBe(big);
    expect(cut.spilled.bytes).toBe(
      Buffer.byteLength(
        JSON.stringify({ type: 'message', role: 'assistant', content: big, ts: '2026-11-28T00:00:01.000Z' }),
      ),
    );
    // The trace replays: the history holds the cut text, which says where the rest is.
    const state = State.fromJsonl(readFileSync(path, 'utf8'));
    expect(state.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(state.replay?.skippedLines).toEqual([]);
  });

  it('a record of many long fields is cut harder until it fits; records under the limit are untouched', () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-sink-'));
    const path = join(directory, 'trace.jsonl');
    const sink = new JsonlTraceSink(path, { maxRecordBytes: 50_000 });
    const many = Array.from({ length: 40 }, (_, index) => `${index}`.repeat(20_000));
    sink.append({ type: 'tool_end', outputs: many, ts: 't' } as unknown as TraceRecord);
    const small = { type: 'status', status: 'running', ts: 't' } as unknown as TraceRecord;
    sink.append(small);
    sink.close();
    const [first, second] = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(Buffer.byteLength(first!)).toBeLessThan(50_000);
    expect(JSON.parse(second!)).toEqual(small);
    expect(MAX_TRACE_RECORD_BYTES).toBe(8 * 1024 * 1024);
  });
});

describe('readTraceFile', () => {
  it('reads a trace in chunks and passes over a line above the limit without holding it', async () => {
    const { readTraceFile } = await import('./trace-file.js');
    const { writeFileSync } = await import('node:fs');
    const directory = mkdtempSync(join(tmpdir(), 'rho-read-file-'));
    const path = join(directory, 'trace.jsonl');
    const huge = JSON.stringify({ type: 'message', role: 'assistant', content: 'z'.repeat(300_000), ts: 't' });
    const small = (n: number) => JSON.stringify({ type: 'status', status: 'running', n, ts: 't' });
    writeFileSync(path, `${small(1)}\n${huge}\n${small(2)}\n`);
    const contents = readTraceFile(path, { maxLineBytes: 100_000 });
    expect(contents.records.map((record) => record['n'])).toEqual([1, 2]);
    expect(contents.skipped).toMatchObject([{ kind: 'too_large', line: 2 }]);
    expect(contents.lines).toEqual([1, 3]);
    expect(readTraceFile(path).records).toHaveLength(3);
  });
});
