import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTERRUPTED_TOOL_RESULT, State } from './state.js';
import { pythonTracesDir } from './testing/fixtures.js';

const fixtures = pythonTracesDir;

function messageRecords(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((record) => record.type === 'message')
    .map(({ type: _type, ts: _ts, ...message }) => message);
}

describe('State.fromJsonl', () => {
  const names = readdirSync(fixtures).sort();

  it('finds the Python fixtures', () => {
    expect(names.length).toBeGreaterThanOrEqual(16);
  });

  it.each(names)('replays the Python trace %s to the messages it holds', (name) => {
    const text = readFileSync(join(fixtures, name, 'trace.jsonl'), 'utf8');
    const state = State.fromJsonl(text);
    const expected = messageRecords(text);
    // The Python original leaves tool calls unanswered after some cancellations; rho answers them.
    const synthetic = state.messages.filter(
      (message) => message.role === 'tool' && message.content === INTERRUPTED_TOOL_RESULT,
    );
    expect(state.messages.filter((message) => !synthetic.includes(message))).toEqual(expected);
    expect(synthetic.length).toBe(state.replay!.interruptedToolCalls.length);
    expect(state.replay!.skippedLines).toEqual([]);
    const runs = text.split('\n').filter((line) => line.includes('"type": "run_start"')).length;
    expect(state.runCount).toBe(runs);
    const llmEnds = text.split('\n').filter((line) => line.includes('"type": "llm_end"'));
    const input = llmEnds.reduce((sum, line) => sum + (JSON.parse(line) as { input_tokens: number }).input_tokens, 0);
    expect(state.usage.input_tokens).toBe(input);
    // Every assistant tool call is followed by exactly one result.
    const answered = state.messages
      .filter((message) => message.role === 'tool')
      .map((message) => (message as { tool_call_id: string }).tool_call_id);
    const called = state.messages.flatMap((message) =>
      message.role === 'assistant' ? (message.tool_calls ?? []).map((call) => call.id) : [],
    );
    expect(answered.sort()).toEqual(called.sort());
  });

  it('tolerates a torn last line and skips unknown record types', () => {
    const lines = [
      JSON.stringify({ type: 'run_start', prompt: 'hi', ts: 't' }),
      JSON.stringify({ type: 'message', role: 'user', content: 'hi', ts: 't' }),
      JSON.stringify({ type: 'future_record', anything: [1, 2], ts: 't' }),
      JSON.stringify({ type: 'message', role: 'assistant', content: 'hello', ts: 't' }),
      '{"type": "message", "role": "user", "cont',
    ];
    const state = State.fromJsonl(lines.join('\n'));
    expect(state.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ]);
    expect(state.replay).toMatchObject({ tornLastLine: true, skippedLines: [] });
    expect(state.status).toBe('running');
  });

  it('replays a trace with CRLF line ends and a byte-order mark (edited on Windows) like any other', () => {
    const lines = [
      { type: 'run_start', prompt: 'hi' },
      { type: 'message', role: 'user', content: 'hi' },
      {
        type: 'llm_end',
        model: 'm',
        input_tokens: 3,
        output_tokens: 1,
        cache_read_tokens: 0,
        reasoning_tokens: 0,
        cost_usd: 0.1,
        duration_ms: 1,
      },
      { type: 'message', role: 'assistant', content: 'hello' },
      { type: 'run_end', status: 'completed' },
    ].map((record) => JSON.stringify(record));
    const state = State.fromJsonl(Buffer.from(`\uFEFF${lines.join('\r\n')}\r\n`, 'utf8'));
    expect(state.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
    ]);
    expect(state).toMatchObject({
      runCount: 1,
      status: 'completed',
      usage: { input_tokens: 3, output_tokens: 1, cost_usd: 0.1 },
    });
    expect(state.replay).toMatchObject({ skippedLines: [], tornLastLine: false, invalidRecords: [] });
  });

  it('answers tool calls interrupted by a crash right after their assistant message', () => {
    const lines = [
      { type: 'run_start', prompt: 'go' },
      { type: 'message', role: 'user', content: 'go' },
      {
        type: 'message',
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'a', type: 'function', function: { name: 'bash', arguments: '{}' } },
          { id: 'b', type: 'function', function: { name: 'bash', arguments: '{}' } },
        ],
      },
      { type: 'tool_start', tool_call_id: 'a', tool_name: 'bash', tool_args: {} },
      { type: 'message', role: 'tool', tool_call_id: 'a', content: 'done' },
      { type: 'tool_end', tool_call_id: 'a', tool_name: 'bash', success: true },
      { type: 'tool_start', tool_call_id: 'b', tool_name: 'bash', tool_args: {} },
      { type: 'run_start', prompt: 'again' },
      { type: 'message', role: 'user', content: 'again' },
    ].map((record) => JSON.stringify(record));
    const state = State.fromJsonl(`${lines.join('\n')}\n`);
    expect(state.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'user']);
    expect(state.messages[3]).toEqual({ role: 'tool', tool_call_id: 'b', content: INTERRUPTED_TOOL_RESULT });
    expect(state.replay!.interruptedToolCalls).toEqual([{ id: 'b', name: 'bash' }]);
  });

  it('applies compactions so a compacted session resumes from its summary', () => {
    const kept = [{ role: 'user', content: 'original task' }];
    const lines = [
      { type: 'message', role: 'user', content: 'original task' },
      { type: 'message', role: 'assistant', content: 'long work' },
      { type: 'compact', trigger: 'manual', tokens_before: 100, tokens_after: 10, summary: 'SUMMARY', kept },
      { type: 'message', role: 'user', content: 'next' },
    ].map((record) => JSON.stringify(record));
    const state = State.fromJsonl(lines.join('\n'));
    expect(state.messages).toEqual([...kept, { role: 'user', content: 'SUMMARY' }, { role: 'user', content: 'next' }]);
  });

  it('round-trips through toJsonl', () => {
    const state = new State();
    state.addMessage({ role: 'user', content: 'q' });
    state.append({
      type: 'llm_end',
      model: 'm',
      input_tokens: 5,
      output_tokens: 2,
      cache_read_tokens: 1,
      reasoning_tokens: 0,
      cost_usd: 0.5,
      duration_ms: 1,
    });
    state.addMessage({ role: 'assistant', content: 'a' });
    const copy = State.fromJsonl(state.toJsonl());
    expect(copy.messages).toEqual(state.messages);
    expect(copy.usage).toEqual(state.usage);
  });

  it('notifies observers of every record in order', () => {
    const state = new State();
    const seen: string[] = [];
    const remove = state.addObserver((record) => seen.push(record.type));
    state.append({ type: 'run_start', prompt: 'x' });
    state.addMessage({ role: 'user', content: 'x' });
    remove();
    state.append({ type: 'run_end', status: 'completed' });
    expect(seen).toEqual(['run_start', 'message']);
  });
});
