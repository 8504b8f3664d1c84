import type { SessionEvent } from '@rho/core';
import { describe, expect, it } from 'vitest';
import { createEventRenderer } from './render.js';

const ts = '2026-11-26T10:00:00.000Z';

interface Call {
  name: string;
  args: unknown;
  content: string;
  success?: boolean;
  metadata?: Record<string, unknown>;
}

/** What one call shows: live (on stderr) or replayed (`rho watch`, without the times). */
function shown(mode: 'live' | 'replay', call: Call, options: { statusLine?: boolean } = {}): string {
  let text = '';
  const render = createEventRenderer({
    mode,
    color: false,
    out: (chunk) => (text += chunk),
    err: (chunk) => (text += chunk),
    width: 80,
    ...options,
  });
  const events = [
    { type: 'tool_start', tool_call_id: 'c1', tool_name: call.name, tool_args: call.args, ts },
    { type: 'message', role: 'tool', tool_call_id: 'c1', content: call.content, ts },
    {
      type: 'tool_end',
      tool_call_id: 'c1',
      tool_name: call.name,
      success: call.success ?? true,
      duration_ms: 7,
      ...(call.metadata === undefined ? {} : { metadata: call.metadata }),
      ts,
    },
  ];
  for (const event of events) render(event as SessionEvent);
  render.finish();
  return text.replaceAll('10:00:00 ', '');
}

const bash = (output: string, exit: number, metadata: Record<string, unknown> = {}): Call => ({
  name: 'bash',
  args: { command: 'make' },
  content: JSON.stringify({ output, metadata: { exit_code: exit, duration_seconds: 0.1 } }, null, 2),
  success: exit === 0,
  metadata: { exit_code: exit, command: 'make', ...metadata },
});

describe('tool results, for their kind', () => {
  it('a command: its output lines, never its JSON; the exit code only when it is not 0', () => {
    expect(shown('live', bash('built a\nbuilt b\n', 0))).toBe(
      '→ bash(make)\n  ✓ bash (7ms)\n    │ built a\n    │ built b\n',
    );
    expect(shown('live', bash('one\ntwo\nthree\nfour\nfive\nsix\n', 2))).toBe(
      '→ bash(make)\n  ✗ bash (7ms): exit 2\n    │ one\n    │ two\n    │ three\n    │ four\n    … 2 more lines\n',
    );
    expect(shown('live', bash('', 0))).toBe('→ bash(make)\n  ✓ bash (7ms)\n    │ (no output)\n');
  });

  it('a command whose output was cut, or that timed out, says so', () => {
    const cut = bash('head\n\n[... 5000 bytes of output omitted ...]\n\ntail', 0);
    expect(shown('live', cut)).toBe(
      '→ bash(make)\n  ✓ bash (7ms)\n    │ head\n    │ \n    │ [... 5000 bytes of output omitted ...]\n    │ \n    … 1 more line\n' +
        '    (output truncated: 5000 bytes omitted from the middle)\n',
    );
    const slow = bash('x\n\n[Command timed out after 5s and was killed]', -1, { timed_out: true });
    expect(shown('live', slow)).toContain('  ✗ bash (7ms): exit -1\n');
    expect(shown('live', slow)).toContain('    (timed out)\n');
  });

  it('a file read: its text lines, without the numbers, and which lines when not all', () => {
    const content = '    10  first\n    11  second\n\n[Showing lines 10-11 of 40]';
    expect(shown('live', { name: 'read', args: { path: 'a.ts' }, content })).toBe(
      "→ read(path='a.ts')\n  ✓ read (7ms)\n    │ first\n    │ second\n    (lines 10-11 of 40)\n",
    );
  });

  it('a write or edit without a diff: its one-line summary', () => {
    const content = 'Created notes.md (12 bytes, 2 lines)';
    const view = shown('replay', {
      name: 'write',
      args: {},
      content,
      metadata: { path: 'notes.md', size_bytes: 12, lines: 2 },
    });
    expect(view).toBe('→ write()\n  ✓ write ok (7ms)\n    │ Created notes.md (12 bytes, 2 lines)\n');
  });

  it('a search: its lines, and a note when the matches were cut', () => {
    const content = 'a.ts:1:x\nb.ts:2:x\n\n[Showing 2 of 3+ matches, truncated]';
    expect(
      shown('live', {
        name: 'grep',
        args: { pattern: 'x' },
        content,
        metadata: { matches: 2, truncated: true },
      }),
    ).toBe(
      "→ grep(pattern='x')\n  ✓ grep (7ms)\n    │ a.ts:1:x\n    │ b.ts:2:x\n    │ \n    │ [Showing 2 of 3+ matches, truncated]\n    (matches truncated)\n",
    );
  });

  it('a SQL result given as columns and rows: an aligned table', () => {
    const content = JSON.stringify({
      columns: ['id', 'name'],
      rows: [
        [1, 'alice'],
        [22, null],
      ],
    });
    expect(shown('live', { name: 'query', args: { sql: 'select' }, content })).toBe(
      "→ query(sql='select')\n  ✓ query (7ms)\n    │ id | name\n    │ ---+------\n    │ 1  | alice\n    │ 22 | NULL\n",
    );
  });

  it('a table the tool aligned itself: its lines, and how many rows came back', () => {
    const content = 'id | name\n---+-----\n1  | a\n2  | b\n3  | c';
    const metadata = { columns: ['id', 'name'], row_count: 3, total_rows: 9, truncated: true };
    expect(shown('live', { name: 'sql', args: {}, content, metadata })).toBe(
      '→ sql()\n  ✓ sql (7ms)\n    │ id | name\n    │ ---+-----\n    │ 1  | a\n    │ 2  | b\n    … 1 more line\n    (3 of 9 rows returned)\n',
    );
  });

  it('an error: one line', () => {
    const content = 'File not found: a.ts\nDid you mean b.ts?';
    expect(shown('live', { name: 'read', args: { path: 'a.ts' }, content, success: false })).toBe(
      "→ read(path='a.ts')\n  ✗ read (7ms): File not found: a.ts\n",
    );
  });

  it('a result of no known kind: as written (JSON included)', () => {
    const content = JSON.stringify({ answer: 42 }, null, 2);
    expect(shown('live', { name: 'mcp_thing', args: {}, content })).toBe(
      '→ mcp_thing()\n  ✓ mcp_thing (7ms)\n    │ {\n    │   "answer": 42\n    │ }\n',
    );
  });

  it('watch shows each kind as the live view does, after its time', () => {
    const call = bash('built a\n', 3);
    expect(shown('replay', call)).toBe('→ bash(make)\n  ✗ bash failed (7ms): exit 3\n    │ built a\n');
    const live = shown('live', call).split('\n').slice(2);
    expect(shown('replay', call).split('\n').slice(2)).toEqual(live);
  });
});

describe('the status line while the answer streams', () => {
  it('shows the time and the tokens so far where the answer ended a line, and clears before more of it', () => {
    let out = '';
    let err = '';
    const writes: string[] = [];
    const render = createEventRenderer({
      mode: 'live',
      color: false,
      statusLine: true,
      out: (text) => {
        out += text;
        writes.push(`out:${text}`);
      },
      err: (text) => {
        err += text;
        writes.push(`err:${text}`);
      },
    });
    render({ type: 'run_start', prompt: 'x', ts } as SessionEvent);
    render({ type: 'text', text: 'Hello there, ', ts } as SessionEvent);
    // In the middle of a line of the answer: no status line.
    expect(err).toBe('');
    render({ type: 'text', text: 'this is the first line.\n', ts } as SessionEvent);
    expect(err).toMatch(/streaming \S+ · \S+ in all · 9 tokens · Ctrl\+C cancels$/);
    render({ type: 'text', text: 'More.', ts } as SessionEvent);
    // Cleared before the answer goes on.
    expect(writes.at(-2)).toBe('err:\r\u001b[K');
    expect(writes.at(-1)).toBe('out:More.');
    render.finish();
    expect(out).toBe('Hello there, this is the first line.\nMore.\n');
  });

  it('draws nothing without a terminal on stderr', () => {
    let err = '';
    const render = createEventRenderer({ mode: 'live', color: false, out: () => {}, err: (text) => (err += text) });
    render({ type: 'text', text: 'line one\n', ts } as SessionEvent);
    render({ type: 'text', text: 'line two\n', ts } as SessionEvent);
    render.finish();
    expect(err).toBe('');
  });
});
