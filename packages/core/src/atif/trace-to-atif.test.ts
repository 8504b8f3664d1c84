import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Agent } from '../agent.js';
import { TraceError } from '../errors.js';
import type { TraceRecord } from '../events.js';
import { createScriptedModelClient } from '../testing/scripted-model-client.js';
import { pythonTracesDir } from '../testing/fixtures.js';
import { defineTool } from '../tool.js';
import type { AtifStep, AtifTrajectory } from './atif-schema.js';
import { ATIF_SCHEMA_VERSION, validateAtifTrajectory } from './atif-schema.js';
import { sessionToAtif } from './session-to-atif.js';
import { traceToAtif } from './trace-to-atif.js';

const fixtures = pythonTracesDir;

const echo = defineTool({
  name: 'echo',
  description: 'Repeats text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  annotations: { readOnly: true },
  async handle({ arguments: { text } }) {
    return { content: `echo: ${text}`, success: true };
  },
});

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'rho-atif-'));
}

function records(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

function expectValid(trajectory: AtifTrajectory): void {
  // A JSON round trip, so that what is checked is what a file would hold.
  expect(validateAtifTrajectory(JSON.parse(JSON.stringify(trajectory)))).toEqual([]);
}

function agentSteps(trajectory: AtifTrajectory): AtifStep[] {
  return trajectory.steps.filter((step) => step.source === 'agent');
}

describe('traceToAtif on traces of the Python original', () => {
  const names = readdirSync(fixtures)
    .filter((name) => existsSync(join(fixtures, name, 'trace.jsonl')))
    .sort();

  it('finds the fixtures', () => {
    expect(names.length).toBeGreaterThanOrEqual(15);
  });

  it.each(names)('%s exports to a valid ATIF-v1.6 trajectory that keeps every message and all usage', (name) => {
    const directory = join(fixtures, name);
    const trajectory = sessionToAtif(directory, { agentVersion: '0.1.0' });
    expectValid(trajectory);
    expect(trajectory.schema_version).toBe(ATIF_SCHEMA_VERSION);
    expect(trajectory.session_id).toBe(name);
    expect(trajectory.agent.model_name).toBe('gpt-5-mini');

    const source = records(join(directory, 'trace.jsonl'));
    const messages = source.filter((record) => record.type === 'message');
    const toolMessages = messages.filter((record) => record.role === 'tool');
    // Every user and assistant message is a step of its own; every tool result is an observation.
    expect(trajectory.steps.filter((step) => step.source === 'user')).toHaveLength(
      messages.filter((record) => record.role === 'user').length,
    );
    expect(agentSteps(trajectory)).toHaveLength(messages.filter((record) => record.role === 'assistant').length);
    const results = trajectory.steps.flatMap((step) => step.observation?.results ?? []);
    expect(results.map((result) => result.content)).toEqual(toolMessages.map((record) => record.content));
    // final_metrics although the original never wrote a usage record to a live trace.
    expect(source.some((record) => record.type === 'usage')).toBe(false);
    const ends = source.filter((record) => record.type === 'llm_end');
    expect(trajectory.final_metrics).toMatchObject({
      total_prompt_tokens: ends.reduce((sum, record) => sum + (record.input_tokens as number), 0),
      total_completion_tokens: ends.reduce((sum, record) => sum + (record.output_tokens as number), 0),
      total_cached_tokens: ends.reduce((sum, record) => sum + (record.cache_read_tokens as number), 0),
      total_steps: trajectory.steps.length,
    });
    // The Python original's config.yaml records the system prompt; when it does, it is the first step.
    const config = readFileSync(join(directory, 'config.yaml'), 'utf8');
    expect(trajectory.steps[0]!.source).toBe(config.startsWith('system_prompt:') ? 'system' : 'user');
  });

  it('groups parallel tool calls with their results and keeps the per-call metrics', () => {
    const trajectory = sessionToAtif(join(fixtures, 'i-parallel-tools-with-text'));
    const [first, second] = agentSteps(trajectory);
    expect(first!.tool_calls).toEqual([
      { tool_call_id: 'call_0001_0', function_name: 'read', arguments: { path: '/tmp/work/trees/i/one.txt' } },
      { tool_call_id: 'call_0001_1', function_name: 'read', arguments: { path: '/tmp/work/trees/i/two.txt' } },
    ]);
    expect(first!.observation!.results).toEqual([
      { source_call_id: 'call_0001_0', content: '     1  first file' },
      { source_call_id: 'call_0001_1', content: '     1  second file' },
    ]);
    expect(first!.metrics).toMatchObject({ prompt_tokens: 2218, completion_tokens: 32, cached_tokens: 0, cost_usd: 0 });
    expect(first!.extra!.tool_outcomes).toEqual([
      { tool_call_id: 'call_0001_0', tool_name: 'read', status: 'succeeded' },
      { tool_call_id: 'call_0001_1', tool_name: 'read', status: 'succeeded' },
    ]);
    expect(second).toMatchObject({
      message: "one.txt says 'first file'; two.txt says 'second file'.",
      metrics: { prompt_tokens: 2341, completion_tokens: 13 },
    });
    expect(second!.tool_calls).toBeUndefined();
  });

  it('marks failed tool calls and keeps a compaction without summary as a system step', () => {
    const failed = agentSteps(sessionToAtif(join(fixtures, 'd-readonly-blocked')))[0]!;
    expect(failed.extra!.tool_outcomes).toEqual([{ tool_call_id: 'call_0001_0', tool_name: 'bash', status: 'failed' }]);

    const compacted = sessionToAtif(join(fixtures, 'f-compact'));
    const compaction = compacted.steps.filter((step) => step.extra?.kind === 'compaction');
    expect(compaction).toHaveLength(1);
    expect(compaction[0]).toMatchObject({
      source: 'system',
      message: '',
      extra: { compaction: { trigger: 'manual', tokens_before: 1410, tokens_after: 1391, summary_recorded: false } },
    });
    // It sits between the third answer and the fourth question, where it happened.
    const index = compacted.steps.indexOf(compaction[0]!);
    expect(compacted.steps[index - 1]!.message).toBe('The mean of value is 15.');
    expect(compacted.steps[index + 1]!.message).toBe('What was the sum again?');
  });

  it('records runs, their statuses and malformed tool arguments as the original did', () => {
    const error = sessionToAtif(join(fixtures, 'm-api-error-400'));
    expect(error.extra!.runs).toEqual([
      {
        prompt: 'Trigger a provider error.',
        started_at: '2026-11-21T21:19:42.816427+00:00',
        status: 'error',
        ended_at: '2026-11-21T21:19:42.917777+00:00',
      },
    ]);
    const malformed = agentSteps(sessionToAtif(join(fixtures, 'h-malformed-json')))[0]!;
    expect(malformed.tool_calls![0]!.arguments).toEqual({});
  });
});

describe('traceToAtif on traces of rho runs', () => {
  it('exports a run with text alongside tool calls, a directive, a compaction and a second run', async () => {
    const directory = tempDir();
    const client = createScriptedModelClient({
      model: 'gpt-4o-mini',
      steps: [
        () => {
          appendFileSync(join(directory, 'directives.jsonl'), `${JSON.stringify({ text: 'be brief' })}\n`);
          return {
            text: 'Let me echo twice.',
            toolCalls: [
              { id: 'a', name: 'echo', arguments: { text: 'one' } },
              { id: 'b', name: 'echo', arguments: { text: 'two' } },
            ],
            usage: { inputTokens: 1000, outputTokens: 30, cachedTokens: 400, reasoningTokens: 12 },
          };
        },
        {
          toolCalls: [{ id: 'c', name: 'echo', arguments: '{"text": "unterminated' }],
          usage: { inputTokens: 1200, outputTokens: 15 },
        },
        { text: 'Done.', usage: { inputTokens: 1300, outputTokens: 5 } },
        // session.compact() asks for the summary with a non-streaming call.
        { text: 'The user asked for echoes; both were done.', usage: { inputTokens: 900, outputTokens: 40 } },
        { text: 'Still done.', usage: { inputTokens: 300, outputTokens: 4 } },
      ],
    });
    const agent = new Agent({ systemPrompt: 'You echo.', tools: [echo], client });
    const session = agent.createSession({ id: 'run-1', directory });
    expect((await session.run('echo one and two')).status).toBe('completed');
    const compacted = await session.compact();
    expect(compacted.ok).toBe(true);
    expect((await session.run('anything else?')).status).toBe('completed');
    client.assertDone();

    const trace = readFileSync(join(directory, 'trace.jsonl'));
    const trajectory = traceToAtif(trace, { sessionId: 'run-1', agentVersion: '9.9.9', systemPrompt: 'You echo.' });
    expectValid(trajectory);
    expect(trajectory.agent).toEqual({ name: 'rho', version: '9.9.9', model_name: 'gpt-4o-mini' });
    expect(trajectory.steps.map((step) => [step.source, step.extra?.kind])).toEqual([
      ['system', 'system_prompt'],
      ['user', undefined],
      ['agent', undefined],
      ['user', 'directive'],
      ['agent', undefined],
      ['agent', undefined],
      ['system', 'compaction'],
      ['user', undefined],
      ['agent', undefined],
    ]);
    const [, user, first, directive, second, third, compaction, , last] = trajectory.steps;
    expect(user!.message).toBe('echo one and two');
    // Text that came with tool calls is kept, with the calls, their results and the call's metrics.
    expect(first).toMatchObject({
      message: 'Let me echo twice.',
      tool_calls: [
        { tool_call_id: 'a', function_name: 'echo', arguments: { text: 'one' } },
        { tool_call_id: 'b', function_name: 'echo', arguments: { text: 'two' } },
      ],
      observation: {
        results: [
          { source_call_id: 'a', content: 'echo: one' },
          { source_call_id: 'b', content: 'echo: two' },
        ],
      },
      metrics: {
        prompt_tokens: 1000,
        completion_tokens: 30,
        cached_tokens: 400,
        extra: { reasoning_tokens: 12, finish_reason: 'tool_calls' },
      },
    });
    expect(typeof first!.metrics!.cost_usd).toBe('number');
    expect(typeof (first!.metrics!.extra as { duration_ms: unknown }).duration_ms).toBe('number');
    expect((first!.extra!.tool_outcomes as { status: string }[]).map((outcome) => outcome.status)).toEqual([
      'succeeded',
      'succeeded',
    ]);
    expect(directive).toMatchObject({
      message: '[Operator directive] be brief',
      extra: { directive: { text: 'be brief' } },
    });
    // Malformed arguments are kept raw; the registry's refusal is the observation.
    expect(second!.tool_calls![0]!.arguments).toEqual({ _raw: '{"text": "unterminated' });
    expect(second!.observation!.results[0]!.content).toMatch(/not valid JSON/);
    expect(second!.message).toBe('');
    expect(third).toMatchObject({ message: 'Done.', metrics: { prompt_tokens: 1300, completion_tokens: 5 } });
    // The compaction's summary is what the model saw afterwards; its model call is not an agent turn.
    expect(compaction!.message).toContain('The user asked for echoes; both were done.');
    expect(compaction!.extra!.compaction).toMatchObject({
      trigger: 'manual',
      summary_recorded: true,
      summary_call: { prompt_tokens: 900, completion_tokens: 40 },
    });
    expect(last).toMatchObject({ message: 'Still done.', metrics: { prompt_tokens: 300, completion_tokens: 4 } });

    // final_metrics equal the session's cumulative usage, compaction call included.
    expect(trajectory.final_metrics).toEqual({
      total_prompt_tokens: session.state.usage.input_tokens,
      total_completion_tokens: session.state.usage.output_tokens,
      total_cached_tokens: session.state.usage.cached_tokens,
      total_cost_usd: session.state.usage.cost_usd,
      total_steps: 9,
      extra: { total_reasoning_tokens: 12, model_calls: 5 },
    });
    expect(session.state.usage.input_tokens).toBe(4700);
    expect((trajectory.extra!.runs as { status: string }[]).map((run) => run.status)).toEqual([
      'completed',
      'completed',
    ]);

    // The session directory exports the same way, with its id and model from meta.json.
    const fromDirectory = sessionToAtif(directory, { agentVersion: '9.9.9', systemPrompt: 'You echo.' });
    expect(fromDirectory).toEqual(trajectory);
  });

  it('exports calls that were refused, interrupted or left without usage', async () => {
    const directory = tempDir();
    const guarded = defineTool({ ...echo, name: 'guarded', annotations: { destructive: true } });
    const client = createScriptedModelClient({
      model: 'no-such-priced-model',
      steps: [
        { toolCalls: [{ id: 'g', name: 'guarded', arguments: { text: 'x' } }], usage: null },
        { text: 'It needs approval.' },
      ],
    });
    const session = new Agent({ tools: [guarded], client }).createSession({ id: 'refused', directory });
    await session.run('try it');
    const path = join(directory, 'trace.jsonl');
    // A crash mid-tool: a call without result and a torn last line.
    appendFileSync(
      path,
      `${JSON.stringify({ type: 'message', role: 'assistant', content: null, tool_calls: [{ id: 'z', type: 'function', function: { name: 'echo', arguments: '{"text":"late"}' } }], ts: new Date().toISOString() })}\n`,
    );
    appendFileSync(
      path,
      `${JSON.stringify({ type: 'tool_start', tool_call_id: 'z', tool_name: 'echo', tool_args: { text: 'late' }, ts: new Date().toISOString() })}\n{"type": "message", "role": "to`,
    );
    const trajectory = sessionToAtif(directory);
    expectValid(trajectory);
    const [refused, answer, interrupted] = agentSteps(trajectory);
    expect(refused!.extra!.tool_outcomes).toEqual([
      expect.objectContaining({
        tool_call_id: 'g',
        status: 'blocked',
        reason: expect.stringContaining('needs approval'),
      }),
    ]);
    expect(refused!.observation!.results[0]!.content).toMatch(/^Not run:/);
    expect(refused!.metrics).toMatchObject({
      prompt_tokens: 0,
      completion_tokens: 0,
      extra: { usage_reported: false, cost_unknown: true },
    });
    expect(refused!.metrics!.cost_usd).toBeUndefined();
    expect(answer!.metrics!.cost_usd).toBeUndefined();
    expect(interrupted!.extra!.tool_outcomes).toEqual([{ tool_call_id: 'z', tool_name: 'echo', status: 'not_run' }]);
    expect(interrupted!.observation).toBeUndefined();
    expect(trajectory.extra!.torn_last_line).toBe(true);
    expect(trajectory.final_metrics!.extra).toMatchObject({ unpriced_calls: 2, model_calls: 2 });
  });
});

describe('traceToAtif robustness', () => {
  const line = (record: Record<string, unknown>) => JSON.stringify({ ts: '2026-01-01T00:00:00.000Z', ...record });

  it('skips malformed lines and unknown record types, and reports them', () => {
    const trace = [
      line({ type: 'run_start', prompt: 'hi' }),
      line({ type: 'message', role: 'user', content: 'hi' }),
      '{not json',
      line({ type: 'telemetry_v9', payload: { anything: true } }),
      '[1, 2]',
      line({
        type: 'llm_end',
        model: 'm',
        input_tokens: 10,
        output_tokens: 2,
        cache_read_tokens: 0,
        reasoning_tokens: 0,
        cost_usd: 0.5,
      }),
      line({ type: 'message', role: 'assistant', content: 'hello', reasoning_content: 'The user greets me.' }),
      '',
    ].join('\n');
    const trajectory = traceToAtif(trace, { sessionId: 's' });
    expectValid(trajectory);
    expect(trajectory.steps).toHaveLength(2);
    expect(trajectory.steps[1]).toMatchObject({
      source: 'agent',
      message: 'hello',
      reasoning_content: 'The user greets me.',
      metrics: { prompt_tokens: 10, cost_usd: 0.5 },
    });
    expect(trajectory.extra).toMatchObject({ skipped_lines: [3, 5] });
    expect(trajectory.extra!.torn_last_line).toBeUndefined();
  });

  it('takes cumulative usage from a usage snapshot (State.toJsonl) when there are no model calls', () => {
    const trace = [
      line({ type: 'message', role: 'user', content: 'q' }),
      line({ type: 'message', role: 'assistant', content: 'a' }),
      line({
        type: 'usage',
        input_tokens: 70,
        output_tokens: 7,
        cached_tokens: 5,
        reasoning_tokens: 1,
        cost_usd: 0.25,
        status: 'completed',
        run_count: 1,
      }),
    ].join('\n');
    const trajectory = traceToAtif(trace);
    expectValid(trajectory);
    expect(trajectory.final_metrics).toMatchObject({
      total_prompt_tokens: 70,
      total_completion_tokens: 7,
      total_cached_tokens: 5,
      total_cost_usd: 0.25,
      extra: { from_usage_snapshot: true },
    });
    expect(agentSteps(trajectory)[0]!.metrics).toBeUndefined();
  });

  it('keeps a tool result whose call is missing as a system observation', () => {
    const trace = [
      line({ type: 'message', role: 'tool', tool_call_id: 'gone', content: 'output' }),
      line({ type: 'message', role: 'assistant', content: 'ok' }),
    ].join('\n');
    const trajectory = traceToAtif(trace);
    expectValid(trajectory);
    expect(trajectory.steps[0]).toMatchObject({
      source: 'system',
      observation: { results: [{ content: 'output' }] },
      extra: { kind: 'orphan_tool_result', tool_call_id: 'gone' },
    });
  });

  it('skips records of the wrong shape as replay does, and lists them in extra.invalid_records', () => {
    const trace = [
      line({ type: 'message', role: 'user', content: 'go' }),
      line({ type: 'message', role: 'assistant', content: null, tool_calls: [null] }),
      line({ type: 'message', role: 'tool', content: 'result without its call id' }),
      line({ type: 'message', role: 'assistant', content: 'done' }),
    ].join('\n');
    const trajectory = traceToAtif(trace);
    expectValid(trajectory);
    expect(trajectory.steps.map((step) => step.message)).toEqual(['go', 'done']);
    expect(trajectory.extra!.invalid_records).toEqual([
      { line: 2, type: 'message', reason: 'tool_calls[0] is not an object' },
      { line: 3, type: 'message', reason: 'is a tool result without tool_call_id' },
    ]);
    expect(trajectory.extra!.skipped_lines).toBeUndefined();
  });

  it('refuses a trace without messages with a TraceError', () => {
    expect(() => traceToAtif(line({ type: 'run_start', prompt: '' }))).toThrow(TraceError);
    expect(() => traceToAtif('')).toThrow(/nothing to export/);
  });

  it('reads bytes as UTF-8', () => {
    const trace = new TextEncoder().encode(`${line({ type: 'message', role: 'user', content: 'naïve — ünïcode' })}\n`);
    expect(traceToAtif(trace).steps[0]!.message).toBe('naïve — ünïcode');
  });

  it('is typed against the trace records it reads', () => {
    // A compile-time guard: the record types the exporter relies on still exist in events.ts.
    const types: TraceRecord['type'][] = [
      'run_start',
      'message',
      'llm_end',
      'tool_end',
      'tool_blocked',
      'compact',
      'directive',
      'error',
      'usage',
      'run_end',
    ];
    expect(types).toHaveLength(10);
  });
});

describe('validateAtifTrajectory', () => {
  const valid = (): Record<string, unknown> => ({
    schema_version: 'ATIF-v1.6',
    session_id: 's',
    agent: { name: 'rho', version: '1' },
    steps: [
      { step_id: 1, source: 'user', message: 'hi', timestamp: '2026-11-21T21:16:16.253949+00:00' },
      {
        step_id: 2,
        source: 'agent',
        message: [{ type: 'text', text: 'hello' }],
        tool_calls: [{ tool_call_id: 'a', function_name: 'f', arguments: {} }],
        observation: { results: [{ source_call_id: 'a', content: 'x' }] },
        metrics: { prompt_tokens: 1 },
      },
    ],
  });

  it('accepts a valid document', () => {
    expect(validateAtifTrajectory(valid())).toEqual([]);
  });

  const cases: [string, (document: Record<string, unknown>) => void, string][] = [
    [
      'a missing session_id',
      (document) => {
        delete document.session_id;
      },
      'session_id',
    ],
    [
      'an unknown version',
      (document) => {
        document.schema_version = 'ATIF-v1.7';
      },
      'schema_version',
    ],
    [
      'an extra root field (v1.7 trajectory_id)',
      (document) => {
        document.trajectory_id = 't';
      },
      'trajectory_id',
    ],
    [
      'no steps',
      (document) => {
        document.steps = [];
      },
      'steps',
    ],
    [
      'a missing agent version',
      (document) => {
        delete (document.agent as Record<string, unknown>).version;
      },
      'agent.version',
    ],
    [
      'a non-sequential step id',
      (document) => {
        (document.steps as Record<string, unknown>[])[1]!.step_id = 3;
      },
      'steps[1].step_id',
    ],
    [
      'an unknown source',
      (document) => {
        (document.steps as Record<string, unknown>[])[0]!.source = 'tool';
      },
      'steps[0].source',
    ],
    [
      'a missing message',
      (document) => {
        delete (document.steps as Record<string, unknown>[])[0]!.message;
      },
      'steps[0].message',
    ],
    [
      'metrics on a user step',
      (document) => {
        (document.steps as Record<string, unknown>[])[0]!.metrics = {};
      },
      'steps[0].metrics',
    ],
    [
      'a fractional token count',
      (document) => {
        (document.steps as Record<string, unknown>[])[1]!.metrics = { prompt_tokens: 1.5 };
      },
      'steps[1].metrics.prompt_tokens',
    ],
    [
      'arguments that are not an object',
      (document) => {
        (document.steps as Record<string, unknown>[])[1]!.tool_calls = [
          { tool_call_id: 'a', function_name: 'f', arguments: '{}' },
        ];
      },
      'steps[1].tool_calls[0].arguments',
    ],
    [
      'an extra field on a tool call (v1.7)',
      (document) => {
        (document.steps as Record<string, unknown>[])[1]!.tool_calls = [
          { tool_call_id: 'a', function_name: 'f', arguments: {}, extra: {} },
        ];
      },
      'steps[1].tool_calls[0].extra',
    ],
    [
      'a result pointing at another call',
      (document) => {
        (document.steps as Record<string, unknown>[])[1]!.observation = { results: [{ source_call_id: 'zz' }] };
      },
      'steps[1].observation.results[0].source_call_id',
    ],
    [
      'a bad timestamp',
      (document) => {
        (document.steps as Record<string, unknown>[])[0]!.timestamp = 'yesterday';
      },
      'steps[0].timestamp',
    ],
    [
      'an image part without source',
      (document) => {
        (document.steps as Record<string, unknown>[])[0]!.message = [{ type: 'image' }];
      },
      'steps[0].message',
    ],
    [
      'a negative total_steps',
      (document) => {
        document.final_metrics = { total_steps: -1 };
      },
      'final_metrics.total_steps',
    ],
  ];

  it.each(cases)('rejects %s', (_name, mutate, path) => {
    const document = valid();
    mutate(document);
    const issues = validateAtifTrajectory(document);
    expect(issues.map((issue) => issue.path)).toContain(path);
  });

  it('rejects what is not an object', () => {
    expect(validateAtifTrajectory(null)).toEqual([{ path: '', message: 'must be an object, got null' }]);
  });

  it('validates a document written to disk and read back', () => {
    const path = join(tempDir(), 'trajectory.json');
    writeFileSync(path, JSON.stringify(valid()));
    expect(validateAtifTrajectory(JSON.parse(readFileSync(path, 'utf8')))).toEqual([]);
  });
});
