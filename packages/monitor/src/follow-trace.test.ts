import { appendFileSync, mkdirSync, mkdtempSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { TraceError } from '@rho/core';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isKnownRecord } from '@rho/core';
import type { RawTraceRecord } from '@rho/core';
import { followTrace } from './follow-trace.js';

function tracePath(): string {
  return join(mkdtempSync(join(tmpdir(), 'rho-follow-')), 'trace.jsonl');
}

/** Pulls records one at a time, so a test can write between reads. */
function reader(iterator: AsyncGenerator<RawTraceRecord, void, undefined>) {
  return async () => {
    const next = await iterator.next();
    if (next.done === true) throw new Error('the follower ended');
    return next.value;
  };
}

/**
 * Counts a follower's onIdle calls, so a test can wait until the follower has read everything
 * written so far instead of sleeping and hoping it has.
 */
function idleWatch() {
  let count = 0;
  return {
    onIdle: () => {
      count += 1;
      return false;
    },
    /**
     * Resolves at the second idle from now: the read before it started after the first one, so
     * after whatever the test wrote before calling this.
     */
    async caughtUp(what: string): Promise<void> {
      const target = count + 2;
      const deadline = Date.now() + 10_000;
      while (count < target) {
        if (Date.now() > deadline) throw new Error(`The follower did not come back idle after ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
  };
}

describe('followTrace', () => {
  it('waits for a file that does not exist yet and reassembles lines appended in pieces', async () => {
    const path = tracePath();
    const controller = new AbortController();
    const idle = idleWatch();
    const next = reader(followTrace(path, { signal: controller.signal, pollIntervalMs: 20, onIdle: idle.onIdle }));
    const first = next();
    const line = `${JSON.stringify({ type: 'message', role: 'assistant', content: 'héllo — ✓ wörld', ts: 't1' })}\n`;
    const bytes = Buffer.from(line, 'utf8');
    // Split inside a multi-byte character; the follower reads each piece before the next is written.
    const cuts = [0, 5, 33, 34, 40, bytes.length];
    for (let index = 0; index < cuts.length - 1; index += 1) {
      appendFileSync(path, bytes.subarray(cuts[index], cuts[index + 1]));
      // The last piece completes the line: the follower then yields instead of going idle.
      if (index < cuts.length - 2) await idle.caughtUp(`piece ${index + 1}`);
    }
    expect(await first).toEqual({ type: 'message', role: 'assistant', content: 'héllo — ✓ wörld', ts: 't1' });
    appendFileSync(path, '{"type": "run_end", "status": "completed"}\n{"type": "llm_st');
    expect(await next()).toEqual({ type: 'run_end', status: 'completed' });
    const third = next();
    await idle.caughtUp('the partial llm_start line');
    appendFileSync(path, 'art", "model": "m"}\n');
    expect(await third).toEqual({ type: 'llm_start', model: 'm' });
    controller.abort();
  });

  it('starts at the end when fromStart is false', async () => {
    const path = tracePath();
    writeFileSync(path, '{"type": "run_start", "prompt": "old"}\n');
    const controller = new AbortController();
    const idle = idleWatch();
    const iterator = followTrace(path, {
      fromStart: false,
      signal: controller.signal,
      pollIntervalMs: 20,
      onIdle: idle.onIdle,
    });
    const pending = iterator.next();
    // Appending before the follower has taken the file's end would skip the new line too.
    await idle.caughtUp('starting at the end');
    appendFileSync(path, '{"type": "run_start", "prompt": "new"}\n');
    expect((await pending).value).toEqual({ type: 'run_start', prompt: 'new' });
    controller.abort();
  });

  it('skips lines that are not records, reporting them', async () => {
    const path = tracePath();
    writeFileSync(
      path,
      'not json\n[1,2]\n{"no": "type"}\n\n{"type": "future_thing", "x": 1}\n{"type": "message", "role": "tool", "content": "no call id"}\n{"type": "directive", "text": "go"}\n',
    );
    const invalid: string[] = [];
    const records: RawTraceRecord[] = [];
    for await (const record of followTrace(path, {
      onIdle: () => true,
      onSkippedLine: (note) => invalid.push(`${note.line} ${note.kind}: ${note.text}`),
    }))
      records.push(record);
    // The same checks as replay: a tool result without tool_call_id is skipped too.
    expect(invalid).toEqual([
      '1 not_json: not json',
      '2 not_a_record: [1,2]',
      '3 not_a_record: {"no": "type"}',
      '6 invalid_record: {"type": "message", "role": "tool", "content": "no call id"}',
    ]);
    expect(records.map((record) => [record.type, isKnownRecord(record)])).toEqual([
      ['future_thing', false],
      ['directive', true],
    ]);
  });

  it('reads what was written while onIdle decided to end (a run_end just before the final status)', async () => {
    const path = tracePath();
    writeFileSync(path, '{"type": "run_start"}\n');
    const records: string[] = [];
    let decisions = 0;
    for await (const record of followTrace(path, {
      onIdle: () => {
        decisions += 1;
        // The writer appends its last record and sets the final status between the follower's
        // last read and its look at the status.
        if (decisions === 1) appendFileSync(path, '{"type": "run_end"}\n');
        return true;
      },
    }))
      records.push(record.type);
    expect(records).toEqual(['run_start', 'run_end']);
    expect(decisions).toBe(2);
  });

  it('starts over when the file is replaced or truncated', async () => {
    const path = tracePath();
    writeFileSync(path, '{"type": "a"}\n{"type": "b"}\n');
    const controller = new AbortController();
    const idle = idleWatch();
    const next = reader(followTrace(path, { signal: controller.signal, pollIntervalMs: 20, onIdle: idle.onIdle }));
    expect((await next()).type).toBe('a');
    expect((await next()).type).toBe('b');
    writeFileSync(`${path}.new`, '{"type": "c"}\n');
    renameSync(`${path}.new`, path);
    expect((await next()).type).toBe('c');
    // The follower must be polling to see the truncation: a file truncated and regrown to the
    // same size while nobody reads is indistinguishable from an unchanged one (as with tail -f).
    const fourth = next();
    writeFileSync(path, '');
    await idle.caughtUp('the truncation');
    appendFileSync(path, '{"type": "d"}\n');
    expect((await fourth).type).toBe('d');
    controller.abort();
  });

  it('ends when the signal aborts while it waits', async () => {
    const path = tracePath();
    const controller = new AbortController();
    const iterator = followTrace(path, { signal: controller.signal, pollIntervalMs: 10_000 });
    const pending = iterator.next();
    // Not a race: whether the abort lands before or during the 10 s wait, the follower must end.
    setTimeout(() => controller.abort(), 30);
    expect(await pending).toEqual({ done: true, value: undefined });
  });

  it('ends with a TraceError naming the file when the trace exists but cannot be read', async () => {
    const directoryTrace = tracePath();
    mkdirSync(directoryTrace);
    const loop = tracePath();
    symlinkSync(loop, loop);
    for (const [path, words] of [
      [directoryTrace, 'it is a directory'],
      [loop, 'too many levels of symbolic links (ELOOP)'],
    ] as const) {
      // Before: a failed open was taken for a file not written yet, and waited on forever.
      const controller = new AbortController();
      const error: unknown = await followTrace(path, { signal: controller.signal, pollIntervalMs: 10_000 })
        .next()
        .then(
          () => undefined,
          (caught: unknown) => caught,
        );
      controller.abort();
      expect(TraceError.isInstance(error)).toBe(true);
      expect((error as Error).message).toBe(
        `Cannot read the trace ${path}: ${words}${words.endsWith(')') ? '' : ', not a file of trace records'}.`,
      );
    }
  });

  it('reassembles a record longer than the 4 MiB it reads at a time', async () => {
    const path = tracePath();
    const content = 'x'.repeat(9 * 1024 * 1024) + 'é';
    writeFileSync(
      path,
      `{"type": "a"}\n${JSON.stringify({ type: 'message', role: 'assistant', content })}\n{"type": "b"}\n`,
    );
    const records: RawTraceRecord[] = [];
    for await (const record of followTrace(path, { onIdle: () => true })) records.push(record);
    expect(records.map((record) => record.type)).toEqual(['a', 'message', 'b']);
    expect(records[1]!.content).toBe(content);
  });
});
