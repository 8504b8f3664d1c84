import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SessionEvent } from '@rho/core';
import { describe, expect, it } from 'vitest';
import { findProjectInstructions } from './project-instructions.js';
import { createEventRenderer, createJsonRenderer } from './render.js';

const ts = '2026-11-26T10:00:00.000Z';
const usage = { input_tokens: 0, output_tokens: 0, cached_tokens: 0, reasoning_tokens: 0 };

function live(options: { markdown?: (text: string) => string; workingDir?: string } = {}) {
  let out = '';
  let err = '';
  const render = createEventRenderer({
    mode: 'live',
    color: false,
    out: (text) => (out += text),
    err: (text) => (err += text),
    ...options,
  });
  return { render: (event: object) => render(event as SessionEvent), out: () => out, err: () => err };
}

describe('createEventRenderer (live)', () => {
  it('marks a turn and a run unpriced only where a call was unpriced', () => {
    const view = live();
    view.render({ type: 'run_start', prompt: 'x', ts });
    view.render({
      type: 'llm_end',
      model: 'm',
      input_tokens: 1000,
      output_tokens: 10,
      cache_read_tokens: 0,
      reasoning_tokens: 0,
      cost_usd: 0.002,
      duration_ms: 5,
      ts,
    });
    view.render({
      type: 'run_end',
      status: 'completed',
      usage: { ...usage, input_tokens: 1000, output_tokens: 10, cost_usd: 0.002 },
      ts,
    });
    // A later run in the same session with an unpriced call, then one without.
    view.render({ type: 'run_start', prompt: 'y', ts });
    view.render({
      type: 'llm_end',
      model: 'local',
      input_tokens: 500,
      output_tokens: 5,
      cache_read_tokens: 0,
      reasoning_tokens: 0,
      cost_usd: null,
      duration_ms: 5,
      ts,
    });
    view.render({
      type: 'run_end',
      status: 'completed',
      usage: { ...usage, input_tokens: 1500, output_tokens: 15, cost_usd: 0.002, unpriced_calls: 1 },
      ts,
    });
    view.render({ type: 'run_start', prompt: 'z', ts });
    view.render({
      type: 'llm_end',
      model: 'm',
      input_tokens: 100,
      output_tokens: 1,
      cache_read_tokens: 0,
      reasoning_tokens: 0,
      cost_usd: 0.001,
      duration_ms: 5,
      ts,
    });
    view.render({
      type: 'run_end',
      status: 'completed',
      usage: { ...usage, input_tokens: 1600, output_tokens: 16, cost_usd: 0.003, unpriced_calls: 1 },
      ts,
    });
    const lines = view.err().replace(/\n$/, '').split('\n');
    expect(lines).toEqual([
      '  turn 1: +1.0K in, +10 out, +$0.0020, 5ms',
      '[run: 1.0K in | 10 out, $0.0020 · session: 1.0K in | 10 out, $0.0020]',
      '  turn 1: +500 in, +5 out, cost unknown, 5ms',
      '[run: 500 in | 5 out, cost unknown · session: 1.5K in | 15 out, $0.0020 + unpriced]',
      '  turn 1: +100 in, +1 out, +$0.0010, 5ms',
      '[run: 100 in | 1 out, $0.0010 · session: 1.6K in | 16 out, $0.0030 + unpriced]',
    ]);
  });

  it('renders Markdown by whole blocks and shows a preview of tool output', () => {
    const view = live({ markdown: (text) => `<${text.trim()}>\n` });
    for (const chunk of ['# Ti', 'tle\n', '\nSome ', 'text.']) view.render({ type: 'text', text: chunk, ts });
    expect(view.out()).toBe('<# Title>\n\n');
    view.render({ type: 'tool_start', tool_call_id: 'c1', tool_name: 'read', tool_args: { path: 'a' }, ts });
    expect(view.out()).toBe('<# Title>\n\n<Some text.>\n');
    view.render({ type: 'message', role: 'tool', tool_call_id: 'c1', content: 'one\ntwo\nthree\nfour\nfive\nsix', ts });
    view.render({ type: 'tool_end', tool_call_id: 'c1', tool_name: 'read', success: true, duration_ms: 3, ts });
    expect(view.err()).toBe(
      "→ read(path='a')\n  ✓ read (3ms)\n    │ one\n    │ two\n    │ three\n    │ four\n    … 2 more lines\n",
    );
  });

  it('writes what one event renders in one write per stream, in order', () => {
    const writes: string[] = [];
    const render = createEventRenderer({
      mode: 'live',
      color: false,
      out: (text) => writes.push(`out:${text}`),
      err: (text) => writes.push(`err:${text}`),
    });
    render({ type: 'text', text: 'Reading.', ts } as SessionEvent);
    render({ type: 'tool_start', tool_call_id: 'c1', tool_name: 'read', tool_args: { path: 'a' }, ts } as SessionEvent);
    render({ type: 'message', role: 'tool', tool_call_id: 'c1', content: 'one\ntwo\nthree', ts } as SessionEvent);
    render({
      type: 'tool_end',
      tool_call_id: 'c1',
      tool_name: 'read',
      success: true,
      duration_ms: 3,
      ts,
    } as SessionEvent);
    expect(writes).toEqual([
      'out:Reading.',
      // The answer's line is ended on stdout before the tool's line goes to stderr.
      'out:\n',
      "err:→ read(path='a')\n",
      'err:  ✓ read (3ms)\n    │ one\n    │ two\n    │ three\n',
    ]);
  });

  it('with gatherPerTick writes a turn of the event loop in one write per stream, and flush() writes at once', async () => {
    const writes: string[] = [];
    const render = createEventRenderer({
      mode: 'live',
      gatherPerTick: true,
      color: false,
      out: (text) => writes.push(`out:${text}`),
      err: (text) => writes.push(`err:${text}`),
    });
    render({ type: 'tool_start', tool_call_id: 'c1', tool_name: 'read', tool_args: { path: 'a' }, ts } as SessionEvent);
    render({ type: 'message', role: 'tool', tool_call_id: 'c1', content: 'one', ts } as SessionEvent);
    render({
      type: 'tool_end',
      tool_call_id: 'c1',
      tool_name: 'read',
      success: true,
      duration_ms: 3,
      ts,
    } as SessionEvent);
    expect(writes).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes).toEqual(["err:→ read(path='a')\n  ✓ read (3ms)\n    │ one\n"]);
    // Before writing to the terminal by other means, flush() puts out what was gathered.
    render({ type: 'tool_start', tool_call_id: 'c2', tool_name: 'read', tool_args: { path: 'b' }, ts } as SessionEvent);
    render.flush();
    writes.push('direct');
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes.slice(1)).toEqual(["err:→ read(path='b')\n", 'direct']);
    // finish() leaves nothing behind either.
    render({ type: 'text', text: 'Done.', ts } as SessionEvent);
    render.finish();
    expect(writes.slice(3)).toEqual(['out:Done.\n']);
  });

  it('shows the diff a write made, against the file as it was before the call', () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-render-'));
    writeFileSync(join(directory, 'f.txt'), 'old\n');
    const view = live({ workingDir: directory });
    view.render({
      type: 'tool_start',
      tool_call_id: 'c1',
      tool_name: 'write',
      tool_args: { path: 'f.txt', content: 'new\n' },
      ts,
    });
    writeFileSync(join(directory, 'f.txt'), 'new\n');
    view.render({ type: 'message', role: 'tool', tool_call_id: 'c1', content: 'Wrote f.txt', ts });
    view.render({ type: 'tool_end', tool_call_id: 'c1', tool_name: 'write', success: true, duration_ms: 1, ts });
    expect(view.err()).toContain('  ✓ write (1ms)\n    @@ -1,1 +1,1 @@\n    -old\n    +new\n');
  });
});

describe('createJsonRenderer', () => {
  it('adds the session id and working directory to run_start only', () => {
    let out = '';
    const render = createJsonRenderer((text) => (out += text), { sessionId: 'abc', workingDir: '/w' });
    render({ type: 'run_start', prompt: 'p', ts } as SessionEvent);
    render({ type: 'text', text: 't', ts } as SessionEvent);
    expect(
      out
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
    ).toEqual([
      { type: 'run_start', prompt: 'p', ts, session_id: 'abc', working_dir: '/w' },
      { type: 'text', text: 't', ts },
    ]);
  });
});

describe('findProjectInstructions', () => {
  it('outside a repository reads the working directory only', () => {
    const root = mkdtempSync(join(tmpdir(), 'rho-agents-'));
    const work = join(root, 'work');
    writeFileSync(join(root, 'AGENTS.md'), 'parent\n');
    mkdirSync(work);
    writeFileSync(join(work, 'AGENTS.md'), 'here\n');
    const found = findProjectInstructions(work);
    expect(found.files).toEqual([join(work, 'AGENTS.md')]);
    expect(found.text).toContain('here');
    expect(found.text).not.toContain('parent');
    expect(findProjectInstructions(root).files).toEqual([join(root, 'AGENTS.md')]);
  });
});
