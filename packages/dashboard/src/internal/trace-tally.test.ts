import { appendFileSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { State } from '@rho/core';
import { describe, expect, it } from 'vitest';
import { TraceTally } from './trace-tally.js';

const llmEnd = (input: number, output: number, extra: object = {}) =>
  `${JSON.stringify({ type: 'llm_end', ts: '2026-11-20T10:00:00.000Z', model: 'm', input_tokens: input, output_tokens: output, cache_read_tokens: 0, reasoning_tokens: 0, cost_usd: 0.5, duration_ms: 10, ...extra })}\n`;

describe('TraceTally', () => {
  it('reads only what was appended, keeps a torn last line for later, and starts over on a replaced trace', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'rho-tally-')), 'trace.jsonl');
    writeFileSync(path, llmEnd(100, 10));
    const tally = new TraceTally(path);
    tally.update();
    expect([tally.inputTokens, tally.outputTokens]).toEqual([100, 10]);
    // Half a record: not counted until its newline arrives.
    const next = llmEnd(200, 20);
    appendFileSync(path, next.slice(0, 30));
    tally.update();
    expect(tally.inputTokens).toBe(100);
    appendFileSync(path, next.slice(30));
    appendFileSync(
      path,
      `${JSON.stringify({ type: 'tool_end', ts: 'x', tool_call_id: 'a', tool_name: 'bash', success: false, duration_ms: 7 })}\n`,
    );
    tally.update();
    expect(tally.inputTokens).toBe(300);
    expect(tally.tools.get('bash')).toEqual({ calls: 1, failures: 1, blocked: 0, durations: [7] });
    expect([...tally.byModelDay.values()]).toEqual([
      { model: 'm', day: '2026-11-20', calls: 2, inputTokens: 300, outputTokens: 30, costUsd: 1, unpricedCalls: 0 },
    ]);
    // A child session's usage rolled up into the parent counts in its tokens, not in its calls.
    appendFileSync(path, llmEnd(50, 5, { purpose: 'child_session', child_session_id: 'c' }));
    tally.update();
    expect(tally.inputTokens).toBe(350);
    expect([...tally.byModelDay.values()][0]!.calls).toBe(2);
    // The session's running total (what the page shows while it runs) includes it, as rho ps does.
    expect([tally.calls, tally.costUsd, tally.unpricedCalls]).toEqual([3, 1.5, 0]);
    // Model latency: the session's own calls only.
    expect(tally.modelDurations.get('m')).toEqual([10, 10]);
    // Replaced (a new inode): read from the start.
    const replacement = `${path}.new`;
    writeFileSync(replacement, llmEnd(7, 1));
    renameSync(replacement, path);
    tally.update();
    expect([tally.inputTokens, tally.outputTokens]).toEqual([7, 1]);
  });

  it("keeps State's totals of the trace while it grows: unpriced and cancelled calls, a child's unpriced calls, a usage snapshot", () => {
    const path = join(mkdtempSync(join(tmpdir(), 'rho-tally-')), 'trace.jsonl');
    const pieces = [
      llmEnd(100, 10),
      llmEnd(30, 3, { cost_usd: null }),
      llmEnd(0, 0, { cost_usd: 0, usage_reported: false }),
      llmEnd(9, 1, { purpose: 'child_session', child_session_id: 'c', cost_usd: 0.25, unpriced_calls: 2 }),
      `${JSON.stringify({ type: 'usage', input_tokens: 1000, output_tokens: 100, cost_usd: 2, unpriced_calls: 1 })}\n`,
      llmEnd(1, 1, { purpose: 'compaction' }),
    ];
    writeFileSync(path, '');
    const tally = new TraceTally(path);
    for (const piece of pieces) {
      appendFileSync(path, piece);
      tally.update();
      const { usage } = State.fromJsonl(readFileSync(path));
      expect([tally.inputTokens, tally.outputTokens, tally.costUsd, tally.unpricedCalls]).toEqual([
        usage.input_tokens,
        usage.output_tokens,
        usage.cost_usd,
        usage.unpriced_calls,
      ]);
    }
    expect([tally.inputTokens, tally.costUsd, tally.unpricedCalls, tally.calls]).toEqual([1001, 2.5, 1, 5]);
  });
});
