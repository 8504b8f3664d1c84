import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { SessionStore } from '@rho/core';
import { updateSessionMeta } from '@rho/core/internal';
import { psAction } from '../src/commands/monitor/monitor-actions.js';
import { monitorIo } from '../src/commands/monitor/monitor-io.js';
import type { Terminal } from '../src/terminal.js';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { MonitoredSession } from '@rho/monitor';
import { createDirectorySource } from '@rho/monitor';
import type { RawTraceRecord, TraceRecord } from '@rho/core';
import { describe, expect, it } from 'vitest';
import { pythonTracesDir } from '@rho/core/testing';
import { formatSessionTable } from '../src/commands/monitor/session-table.js';
import { createEventRenderer } from '../src/render.js';
import { splitWords } from '../src/commands/monitor/split-words.js';
import { isKnownRecord } from '@rho/core';

const pythonTraces = pythonTracesDir;

function session(id: string, fields: Partial<MonitoredSession> = {}): MonitoredSession {
  return {
    id,
    directory: `/sessions/${id}`,
    status: 'completed',
    recordedStatus: 'completed',
    startedAt: '2026-11-21T10:00:00.000Z',
    ...fields,
  };
}

describe('splitWords', () => {
  it('splits like a shell: quotes group, backslash escapes, an open quote is an error', () => {
    expect(splitWords('directive ab12 "focus on the \\"error\\" lines" now')).toEqual([
      'directive',
      'ab12',
      'focus on the "error" lines',
      'now',
    ]);
    expect(splitWords("  connect a  b --task 'what overlaps?' ")).toEqual([
      'connect',
      'a',
      'b',
      '--task',
      'what overlaps?',
    ]);
    expect(splitWords('say it\\ twice ""')).toEqual(['say', 'it twice', '']);
    expect(splitWords('')).toEqual([]);
    expect(splitWords('directive x "open')).toBeUndefined();
  });
});

describe('formatSessionTable', () => {
  const now = Date.parse('2026-11-21T10:05:30.000Z');
  const sessions = [
    session('child001', {
      status: 'running',
      recordedStatus: 'running',
      parentId: 'parent01',
      model: 'gpt-4o-mini',
      startedAt: '2026-11-21T10:04:00.000Z',
      firstPrompt: 'sub task',
    }),
    session('parent01', {
      status: 'dead',
      recordedStatus: 'running',
      model: 'gpt-4o-mini',
      costUsd: 0.01234,
      firstPrompt: 'Investigate\nthe   outage in the payment service and write a report about it',
    }),
  ];

  it('indents children under their parent and cuts the prompt to the width', () => {
    const table = formatSessionTable(sessions, { color: false, width: 80, now });
    expect(table.split('\n')).toEqual([
      'ID          STATUS   MODEL          AGE     COST  PROMPT',
      'parent01    dead     gpt-4o-mini  5m30s  $0.0123  Investigate the outage in the…',
      '└ child001  running  gpt-4o-mini  1m30s        -  sub task',
    ]);
  });

  it('colours the status only when asked', () => {
    expect(formatSessionTable(sessions, { color: false, width: 100, now })).not.toContain('\u001b[');
    const coloured = formatSessionTable(sessions, { color: true, width: 100, now });
    expect(coloured).toContain('\u001b[31mdead   \u001b[39m');
    expect(coloured).toContain('\u001b[32mrunning\u001b[39m');
  });
});

describe('createEventRenderer in replay mode (rho watch, the monitor)', () => {
  it('renders every record of the Python fixture traces without failing', () => {
    for (const name of readdirSync(pythonTraces)) {
      let output = '';
      const renderer = createEventRenderer({
        mode: 'replay',
        color: false,
        out: (text) => {
          output += text;
        },
      });
      const render = (record: RawTraceRecord) => {
        if (isKnownRecord(record)) renderer(record);
      };
      for (const line of readFileSync(join(pythonTraces, name, 'trace.jsonl'), 'utf8').split('\n')) {
        if (line.trim() === '') continue;
        try {
          render(JSON.parse(line) as RawTraceRecord);
        } catch (error) {
          throw new Error(`${name}: ${line.slice(0, 80)}: ${String(error)}`, { cause: error });
        }
      }
      expect(output, name).toMatch(/▶ run started: /);
    }
  });

  it('shows model calls, tool calls with arguments and results, messages, compactions, directives and the end', () => {
    let output = '';
    const renderer = createEventRenderer({
      mode: 'replay',
      color: false,
      out: (text) => {
        output += text;
      },
    });
    const render = (record: RawTraceRecord) => {
      if (isKnownRecord(record)) renderer(record);
    };
    const ts = '2026-11-21T10:00:01.000Z';
    const records = [
      { type: 'run_start', prompt: 'Check the disk', ts },
      { type: 'llm_start', model: 'gpt-4o-mini', context_size: 1500, ts },
      {
        type: 'llm_end',
        model: 'gpt-4o-mini',
        input_tokens: 1500,
        output_tokens: 42,
        cache_read_tokens: 0,
        reasoning_tokens: 0,
        cost_usd: 0.00025,
        duration_ms: 1250,
        ts,
      },
      { type: 'message', role: 'assistant', content: 'Let me look.', tool_calls: [], ts },
      { type: 'tool_start', tool_call_id: 'c1', tool_name: 'bash', tool_args: { command: 'df -h' }, ts },
      { type: 'message', role: 'tool', tool_call_id: 'c1', content: 'df: permission denied\nmore', ts },
      { type: 'tool_end', tool_call_id: 'c1', tool_name: 'bash', success: false, duration_ms: 20, ts },
      {
        type: 'tool_blocked',
        tool_call_id: 'c2',
        tool_name: 'bash',
        tool_args: { command: 'rm -rf /' },
        reason: 'readonly profile',
        ts,
      },
      { type: 'compact', trigger: 'auto', tokens_before: 90000, tokens_after: 4000, summary: 's', kept: [], ts },
      { type: 'directive', text: 'Stop after this.', ts },
      { type: 'status', status: 'paused', ts },
      { type: 'error', content: 'boom', ts },
      { type: 'something_new', ts },
      {
        type: 'run_end',
        status: 'limit',
        limit: 'max_turns',
        usage: { input_tokens: 1500, output_tokens: 42, cached_tokens: 0, reasoning_tokens: 0, cost_usd: 0.00025 },
        ts,
      },
    ];
    for (const record of records) render(record as RawTraceRecord);
    expect(output.split('\n')).toEqual([
      '10:00:01 ▶ run started: Check the disk',
      '10:00:01 … calling gpt-4o-mini (context 1.5K tokens)',
      '10:00:01 ◆ gpt-4o-mini: 1.5K in, 42 out, $0.0003, 1s',
      '10:00:01 assistant: Let me look.',
      '10:00:01 → bash(df -h)',
      // A failure is one line: its first line of text (the rest is in the trace).
      '10:00:01   ✗ bash failed (20ms): df: permission denied',
      '10:00:01   ⊘ bash(rm -rf /) blocked: readonly profile',
      '10:00:01 compacted (auto): 90.0K -> 4.0K tokens',
      '10:00:01 ⚑ directive: Stop after this.',
      '10:00:01 status: paused',
      '10:00:01 error: boom',
      '10:00:01 ■ run ended: limit (max_turns) [1.5K in, 42 out, $0.0003]',
      '',
    ]);
  });

  const ts = '2026-12-02T13:00:05.000Z';
  const waiting = [
    {
      type: 'approval_requested',
      tool_call_id: 'call_rm',
      tool_name: 'bash',
      tool_args: { command: 'rm -rf build' },
      reason: 'bash: the arguments contain the dangerous pattern "rm -rf"',
      dangerous: 'rm -rf',
      expires_at: '2026-12-02T14:00:05.000Z',
      on_timeout: 'approve',
      ts,
    },
    {
      type: 'approval_answered',
      tool_call_id: 'call_rm',
      tool_name: 'bash',
      decision: 'approve',
      scope: 'once',
      by: 'alice@node-a',
      source: 'operator',
      ts,
    },
    { type: 'approval_requested', tool_call_id: 'call 2', tool_name: 'write', tool_args: { path: 'a.txt' }, ts },
    {
      type: 'approval_answered',
      tool_call_id: 'call 2',
      tool_name: 'write',
      decision: 'deny',
      scope: 'once',
      reason: 'use b.txt',
      by: 'timeout',
      source: 'timeout',
      ts,
    },
    {
      type: 'approval_answered',
      tool_call_id: 'c3',
      tool_name: 'read',
      decision: 'approve',
      scope: 'tool',
      by: 'bob@node-b',
      source: 'operator',
      ts,
    },
    {
      type: 'hook',
      event: 'pre_tool',
      hook: 'audit.sh',
      outcome: 'ok',
      duration_ms: 12,
      decision: 'allow',
      tool_call_id: 'c3',
      ts,
    },
    { type: 'hook', event: 'session_end', hook: 'https://hooks.example/done', outcome: 'ok', duration_ms: 1500, ts },
    {
      type: 'hook',
      event: 'post_tool',
      hook: 'notify.sh',
      outcome: 'timeout',
      duration_ms: 10000,
      reason: 'killed at 10 s',
      ts,
    },
  ];

  it('shows a waiting call with the commands that answer it, who answered it and how, and every hook run', () => {
    let output = '';
    const renderer = createEventRenderer({
      mode: 'replay',
      color: false,
      sessionId: '3f2a9c1e',
      out: (text) => (output += text),
    });
    for (const record of waiting) renderer(record as unknown as TraceRecord);
    expect(output.split('\n')).toEqual([
      '13:00:05 ⏸ waiting for approval: bash(rm -rf build) — bash: the arguments contain the dangerous pattern "rm -rf" (dangerous pattern "rm -rf"); answer with rho approve 3f2a9c1e call_rm or rho deny 3f2a9c1e call_rm; at 14:00:05 UTC it is denied',
      '13:00:05 ✓ approved by alice@node-a (once) — bash call call_rm',
      "13:00:05 ⏸ waiting for approval: write(path='a.txt') — the profile asks for approval of this tool; answer with rho approve 3f2a9c1e 'call 2' or rho deny 3f2a9c1e 'call 2'",
      '13:00:05 ✗ denied by timeout (once) — write call call 2: use b.txt',
      '13:00:05 ✓ approved by bob@node-b (always read) — read call c3',
      '13:00:05 hook audit.sh (pre_tool) ok in 12ms: allow',
      '13:00:05 hook https://hooks.example/done (session_end) ok in 1s',
      '13:00:05 hook notify.sh (post_tool) timed out: killed at 10 s',
      '',
    ]);
  });

  it('a live run leaves the waiting and the answers to its own notice, and shows only the hooks that failed', () => {
    let output = '';
    const renderer = createEventRenderer({ mode: 'live', color: false, out: (text) => (output += text) });
    for (const record of waiting) renderer(record as unknown as TraceRecord);
    renderer.finish();
    expect(output).toBe('hook notify.sh (post_tool) timed out: killed at 10 s\n');
  });
});

describe('psAction', () => {
  it('shows the newest sessions and every older one that is still active', async () => {
    const directory = join(mkdtempSync(join(tmpdir(), 'rho-ps-')), 'sessions');
    const store = new SessionStore(directory);
    const add = (id: string, startedAt: string, fields: object) =>
      updateSessionMeta(store.create({ id }).directory, { started_at: startedAt, ...fields });
    add('old00run', '2026-11-01T00:00:00.000Z', {
      status: 'running',
      pid: process.pid,
      hostname: hostname(),
      heartbeat_at: new Date().toISOString(),
    });
    add('old00end', '2026-11-02T00:00:00.000Z', { status: 'completed' });
    add('old00bye', '2026-11-03T00:00:00.000Z', { status: 'error' });
    add('new00end', '2026-11-04T00:00:00.000Z', { status: 'completed' });
    const stdout = new PassThrough();
    let output = '';
    stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const terminal: Terminal = { stdout, stderr: new PassThrough(), color: false };
    expect(await psAction(createDirectorySource(directory), { json: false, limit: 1 }, monitorIo(terminal, {}))).toBe(
      0,
    );
    const lines = output.trim().split('\n');
    expect(lines.map((line) => line.split(/\s+/)[0])).toEqual(['ID', 'new00end', 'old00run', '(2']);
    expect(lines.at(-1)).toBe('(2 older sessions not shown; use --limit N or --json)');
    output = '';
    await psAction(createDirectorySource(directory), { json: true, limit: 2 }, monitorIo(terminal, {}));
    expect((JSON.parse(output) as { id: string }[]).map((entry) => entry.id)).toEqual(['new00end', 'old00bye']);
  });
});
