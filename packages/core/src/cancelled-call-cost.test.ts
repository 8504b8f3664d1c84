import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Agent } from './agent.js';
import { traceToAtif } from './atif/trace-to-atif.js';
import type { TraceRecord } from './events.js';
import { readSessionMeta } from './session-meta.js';
import { SessionStore } from './session-store.js';
import { State } from './state.js';
import { createScriptedModelClient } from './testing/scripted-model-client.js';

function readTrace(directory: string): TraceRecord[] {
  return readFileSync(join(directory, 'trace.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as TraceRecord);
}

describe('a cancelled model call', () => {
  it('that reported no usage leaves the cost known: it is not an unpriced call', async () => {
    const store = new SessionStore(mkdtempSync(join(tmpdir(), 'rho-cancelled-')));
    const { id, directory } = store.create({});
    const client = createScriptedModelClient({ model: 'gpt-5-mini', steps: [{ text: 'first' }, { hang: true }] });
    const session = new Agent({ client }).createSession({ id, directory });
    expect((await session.run('one')).status).toBe('completed');
    const cost = session.state.usage.cost_usd!;
    expect(cost).toBeGreaterThan(0);
    setTimeout(() => session.cancel(), 20);
    expect((await session.run('two')).status).toBe('cancelled');
    client.assertDone();
    const cancelled = readTrace(directory).findLast((record) => record.type === 'llm_end');
    expect(cancelled).toMatchObject({ usage_reported: false, cost_usd: 0 });
    for (const usage of [session.state.usage, State.fromJsonl(readFileSync(join(directory, 'trace.jsonl'))).usage])
      expect(usage).toMatchObject({ cost_usd: cost, unpriced_calls: 0 });
    expect(readTrace(directory).at(-1)).toMatchObject({ type: 'run_end', usage: { cost_usd: cost } });
    expect(readSessionMeta(directory)?.cost_usd).toBe(cost);
    expect(store.list().find((info) => info.id === id)?.costUsd).toBe(cost);
    const atif = traceToAtif(readFileSync(join(directory, 'trace.jsonl')));
    expect(atif.final_metrics?.total_cost_usd).toBe(cost);
    expect(atif.final_metrics?.extra?.unpriced_calls).toBeUndefined();
  });
});
