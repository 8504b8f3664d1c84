import { appendFileSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RawTraceRecord } from '@rho/core';
import { followTrace } from '@rho/monitor';
import { describe, expect, it } from 'vitest';
import type { DashboardSource } from '../dashboard-source.js';
import { RecordOffsets } from './record-offsets.js';
import { TraceIndex } from './trace-index.js';

/** What the follower hands on, in order, as the viewer numbers records. */
async function followed(path: string): Promise<RawTraceRecord[]> {
  const stop = new AbortController();
  const out: RawTraceRecord[] = [];
  for await (const record of followTrace(path, { signal: stop.signal, onIdle: () => true })) out.push(record);
  return out;
}

const line = (record: Record<string, unknown>) => JSON.stringify(record);

describe('RecordOffsets', () => {
  it("reads records by the follower's numbering, over blank, broken, CRLF and too-long lines, as the file grows and is replaced", async () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-offsets-'));
    const path = join(directory, 'trace.jsonl');
    writeFileSync(
      path,
      `\uFEFF${line({ type: 'run_start', prompt: 'é ünïcode' })}\n\n not json\n${line({ type: 'message', role: 'user', content: 'a' })}\r\n[1,2]\n${line({ type: 'status', status: 'paused' })}\n${line({ type: 'message', role: 'assistant', content: 'torn' }).slice(0, 20)}`,
    );
    const offsets = new RecordOffsets(path);
    const expected = await followed(path);
    expect(expected.map((record) => record.type)).toEqual(['run_start', 'message', 'status']);
    const all = [0, 1, 2, 3, 99];
    expect([...(await offsets.read(all))]).toEqual(expected.map((record, index) => [index, record]));
    // The torn line is finished by the next writer on a line of its own; more records come.
    appendFileSync(
      path,
      `\n${line({ type: 'directive', text: 'go on' })}\n${line({ type: 'run_end', status: 'completed' })}\n`,
    );
    const grown = await followed(path);
    expect([...(await offsets.read([4, 3, 2]))]).toEqual(
      [4, 3, 2].flatMap((index) => (grown[index] === undefined ? [] : [[index, grown[index]]])),
    );
    expect(grown.map((record) => record.type).slice(3)).toEqual(['directive', 'run_end']);
    // Replaced by another file (a rename over it): read from the start again.
    writeFileSync(join(directory, 'next.jsonl'), `${line({ type: 'run_start', prompt: 'other' })}\n`);
    renameSync(join(directory, 'next.jsonl'), path);
    expect([...(await offsets.read([0, 1]))]).toEqual([[0, { type: 'run_start', prompt: 'other' }]]);
  });

  it('gives the same records to concurrent readers', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-offsets-'));
    const path = join(directory, 'trace.jsonl');
    writeFileSync(
      path,
      Array.from({ length: 500 }, (_, index) => line({ type: 'message', role: 'user', content: `m${index}` })).join(
        '\n',
      ) + '\n',
    );
    const offsets = new RecordOffsets(path);
    const [first, second] = await Promise.all([offsets.read([0, 250, 499]), offsets.read([1, 498])]);
    expect([...first.values()].map((record) => record.content)).toEqual(['m0', 'm250', 'm499']);
    expect([...second.values()].map((record) => record.content)).toEqual(['m1', 'm498']);
  });
});

describe('TraceIndex without readRecords', () => {
  it('keeps records within its budget and reads those it let go from the source again', async () => {
    const records: RawTraceRecord[] = Array.from({ length: 200 }, (_, index) => ({
      type: 'message',
      role: 'user',
      content: `${index}`.padEnd(500, '.'),
    }));
    let follows = 0;
    const source = {
      description: 'memory',
      follow: (_id: string, { signal }: { signal: AbortSignal }) => ({
        async *[Symbol.asyncIterator]() {
          follows += 1;
          yield records;
          yield [];
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        },
      }),
    } as unknown as DashboardSource;
    const index = new TraceIndex(source, 's', 20_000);
    await index.ready();
    expect(index.builder.records).toBe(200);
    const found = await index.records([0, 10, 199, 500]);
    expect(new Set(found.keys())).toEqual(new Set([0, 10, 199]));
    expect(JSON.parse(found.get(0)!)).toEqual(records[0]);
    expect(JSON.parse(found.get(199)!)).toEqual(records[199]);
    // 0 and 10 had been let go (200 records of 500+ characters, 20,000 kept): read again, once.
    expect(follows).toBe(2);
    index.close();
  });
});
