import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, readTrace, SessionStore, State } from '@rho/core';
import { createScriptedModelClient } from '@rho/core/testing';
import { describe, expect, it } from 'vitest';
import { renderTranscript } from './render-transcript.js';
import { buildTranscript } from './transcript.js';
import type { TranscriptHeader } from './transcript.js';
import { costText } from './transcript-text.js';

/** The header's figures and State's replay of the same trace, side by side. */
function figures(trace: string): { header: Partial<TranscriptHeader>; state: Partial<TranscriptHeader> } {
  const { header } = buildTranscript(readTrace(trace).records, { sessionId: 's' });
  const { usage } = State.fromJsonl(trace);
  const unpriced = usage.unpriced_calls ?? 0;
  return {
    header: {
      inputTokens: header.inputTokens,
      outputTokens: header.outputTokens,
      cachedTokens: header.cachedTokens,
      reasoningTokens: header.reasoningTokens,
      costUsd: header.costUsd,
    },
    state: {
      inputTokens: usage.input_tokens,
      outputTokens: usage.output_tokens,
      cachedTokens: usage.cached_tokens,
      reasoningTokens: usage.reasoning_tokens,
      costUsd: unpriced > 0 && usage.cost_usd === 0 ? null : usage.cost_usd,
    },
  };
}

const jsonl = (records: object[]) => `${records.map((record) => JSON.stringify(record)).join('\n')}\n`;
const llmEnd = (fields: object) => ({
  type: 'llm_end',
  model: 'm',
  input_tokens: 0,
  output_tokens: 0,
  cache_read_tokens: 0,
  reasoning_tokens: 0,
  cost_usd: 0,
  duration_ms: 1,
  ...fields,
});

describe("a transcript's usage", () => {
  it("is State's for a real session of several model calls, the last one cancelled before any usage", async () => {
    const store = new SessionStore(mkdtempSync(join(tmpdir(), 'rho-transcript-usage-')));
    const { id, directory } = store.create({});
    const client = createScriptedModelClient({
      model: 'gpt-5-mini',
      steps: [
        { toolCalls: [{ id: 'c1', name: 'no_such_tool', arguments: '{}' }] },
        { text: 'first', usage: { cachedTokens: 60, reasoningTokens: 8 } },
        { text: 'second', usage: { inputTokens: 300, outputTokens: 40, costUsd: 0.125 } },
        { hang: true },
      ],
    });
    const session = new Agent({ client }).createSession({ id, directory });
    expect((await session.run('one')).status).toBe('completed');
    expect((await session.run('two')).status).toBe('completed');
    setTimeout(() => session.cancel(), 20);
    expect((await session.run('three')).status).toBe('cancelled');
    client.assertDone();

    const trace = readFileSync(join(directory, 'trace.jsonl'), 'utf8');
    const calls = readTrace(trace).records.filter((record) => record.type === 'llm_end');
    expect(calls).toHaveLength(4);
    expect(calls.at(-1)).toMatchObject({ usage_reported: false, cost_usd: 0 });
    const { header, state } = figures(trace);
    expect(header).toEqual(state);
    expect(state.costUsd).toBeGreaterThan(0);
    expect(state.inputTokens).toBeGreaterThan(0);
    expect(buildTranscript(readTrace(trace).records, { sessionId: id }).header.modelCalls).toBe(4);
    // What the export prints is that figure.
    expect(renderTranscript(trace, 'md', { sessionId: id })).toContain(costText(state.costUsd!));
  });

  it("is State's with unpriced calls, a child's rolled-up unpriced calls, a compaction and a usage snapshot", () => {
    const calls = [
      llmEnd({ input_tokens: 100, output_tokens: 10, cache_read_tokens: 40, reasoning_tokens: 5, cost_usd: 0.25 }),
      llmEnd({ input_tokens: 7, output_tokens: 0, cost_usd: 0, usage_reported: false }),
      llmEnd({ input_tokens: 30, output_tokens: 3, cost_usd: null }),
      llmEnd({ input_tokens: 50, output_tokens: 5, cost_usd: 0.5, purpose: 'compaction' }),
      llmEnd({
        input_tokens: 9,
        output_tokens: 1,
        cost_usd: 0.125,
        purpose: 'child_session',
        child_session_id: 'kid00001',
        unpriced_calls: 2,
      }),
    ];
    const { header, state } = figures(jsonl(calls));
    expect(header).toEqual(state);
    expect(header).toMatchObject({ inputTokens: 196, cachedTokens: 40, costUsd: 0.875 });

    // Only unpriced calls: no cost, for both.
    const unpriced = figures(jsonl([llmEnd({ input_tokens: 3, cost_usd: null }), llmEnd({ cost_usd: 0 })]));
    expect(unpriced.header).toEqual(unpriced.state);
    expect(unpriced.header.costUsd).toBeNull();

    // A rolled-up child record whose child's only calls had no price: unknown, as State says.
    const child = figures(jsonl([llmEnd({ purpose: 'child_session', unpriced_calls: 1 })]));
    expect(child.header).toEqual(child.state);
    expect(child.header.costUsd).toBeNull();

    // A snapshot (State.toJsonl's `usage` record) replaces what came before; later calls add to it.
    const snapshot = { type: 'usage', input_tokens: 1000, output_tokens: 100, cost_usd: 2, unpriced_calls: 1 };
    const resumed = figures(jsonl([...calls, snapshot, llmEnd({ input_tokens: 1, cost_usd: 0.5 })]));
    expect(resumed.header).toEqual(resumed.state);
    expect(resumed.header).toMatchObject({ inputTokens: 1001, costUsd: 2.5 });
  });
});
