import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer, LoopbackStep } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { bin } from './support/run-rho.js';
import { hasTmux, TmuxSession } from './support/tmux.js';

// What a person sees in the REPL (issue 17): Enter refuses, diffs, output previews, rendered
// Markdown, the status line's phases, and text typed ahead during a run kept intact.

let server: LoopbackServer | undefined;
let terminal: TmuxSession | undefined;
afterEach(async () => {
  terminal?.kill();
  terminal = undefined;
  await server?.close();
  server = undefined;
});

function setup(): { home: string; work: string; profile: string } {
  const root = mkdtempSync(join(tmpdir(), 'rho-repl-ux-'));
  const work = mkdtempSync(join(root, 'work-'));
  writeFileSync(join(work, 'notes.txt'), 'alpha\nbeta\ngamma\n');
  writeFileSync(join(work, 'long.txt'), Array.from({ length: 12 }, (_, index) => `line ${index + 1}`).join('\n'));
  const profile = join(root, 'ask-writes.yaml');
  writeFileSync(
    profile,
    'profile: ask-writes\ndescription: Writes files, asks first\nfile_write: full\napproval: all\n',
  );
  return { home: join(root, 'home'), work, profile };
}

/** A gate a scripted answer waits on, opened by the test. */
function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

const editCall = {
  name: 'edit',
  arguments: JSON.stringify({ path: 'notes.txt', old_string: 'beta', new_string: 'BETA' }),
};

describe.runIf(hasTmux)('the REPL experience in a terminal', () => {
  it('Enter refuses an approval; the prompt names the risk and shows the diff; an approved edit shows its diff after the call', async () => {
    const { home, work, profile } = setup();
    server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [editCall] },
        { type: 'response', toolCalls: [editCall] },
        { type: 'response', text: 'Edited.' },
      ],
    });
    terminal = new TmuxSession(
      `node '${bin}' --base-url ${server.url} --profile '${profile}'`,
      { RHO_HOME: home },
      work,
    );
    await terminal.waitFor(/Type a task/);
    terminal.type('capitalise beta');
    terminal.keys('Enter');
    const asked = await terminal.waitFor(/Allow\? .*\(Enter = no\)/);
    expect(asked).toMatch(/approval needed edit\(path='notes\.txt', old_string='beta', new_string='BETA'\)/);
    expect(asked).toMatch(/risk: profile ask-writes requires approval for every tool call/);
    expect(asked).toMatch(/@@ -1,3 \+1,3 @@\n\s+ alpha\n\s+-beta\n\s+\+BETA\n\s+ gamma/);
    // Enter alone: refused, the file untouched, and the run stops.
    terminal.keys('Enter');
    await terminal.waitFor(/edit\(.*\) blocked: rejected by the user/);
    expect(readFileSync(join(work, 'notes.txt'), 'utf8')).toBe('alpha\nbeta\ngamma\n');
    await terminal.waitFor(/\[run: [\s\S]*›\s*$/);

    terminal.type('try again');
    terminal.keys('Enter');
    await terminal.waitFor(/Allow\?[\s\S]*Allow\?/);
    terminal.type('y');
    terminal.keys('Enter');
    const done = await terminal.waitFor(/Edited\./);
    expect(readFileSync(join(work, 'notes.txt'), 'utf8')).toBe('alpha\nBETA\ngamma\n');
    // After the call: the result line, then the diff it made.
    expect(done).toMatch(/✓ edit[^\n]*\n\s+@@ -1,3 \+1,3 @@\n\s+ alpha\n\s+-beta\n\s+\+BETA/);
  });

  it('previews tool output (first lines and a count of the rest) and renders Markdown answers', async () => {
    const { home, work, profile } = setup();
    server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'read', arguments: '{"path": "long.txt"}' }] },
        {
          type: 'response',
          text: '# Findings\n\nThe file has **twelve** lines and `line 12` ends it.\n\n- first point\n- second point\n\n```js\nconst lines = 12;\n```\n',
          chunkSize: 5,
          delayMs: 2,
        },
      ],
    });
    terminal = new TmuxSession(
      `node '${bin}' --base-url ${server.url} --profile '${profile}' --auto-approve`,
      { RHO_HOME: home },
      work,
    );
    await terminal.waitFor(/Type a task/);
    terminal.type('read long.txt');
    terminal.keys('Enter');
    const screen = await terminal.waitFor(/\[run: /);
    expect(screen).toMatch(
      /✓ read[^\n]*\n\s+│ .*line 1\n\s+│ .*line 2\n\s+│ .*line 3\n\s+│ .*line 4\n\s+… \d+ more lines/,
    );
    // Rendered: no Markdown markers left, the list bulleted, the code block's text kept.
    expect(screen).toMatch(/Findings/);
    expect(screen).not.toMatch(/# Findings/);
    expect(screen).toMatch(/The file has twelve lines and line 12 ends it\./);
    expect(screen).not.toContain('**');
    expect(screen).not.toContain('```');
    expect(screen).toMatch(/\* first point/);
    expect(screen).toMatch(/const lines = 12;/);
  });

  it('shows retries and the phase in the status line (waiting for the model, running a tool), then per-turn usage', async () => {
    const { home, work } = setup();
    const firstAnswer = gate();
    const toolDone = gate();
    server = await startLoopbackServer({
      respond: async (_request, index): Promise<LoopbackStep> => {
        // A rate limit first: the retry and its backoff show.
        if (index === 0) return { type: 'http_error', status: 429, message: 'slow down', retryAfter: 2 };
        if (index === 1) {
          await firstAnswer.wait;
          return {
            type: 'response',
            toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command: 'sleep 30' }) }],
          };
        }
        await toolDone.wait;
        return { type: 'response', text: 'Finished.' };
      },
    });
    const unrestricted = join(home, '..', 'unrestricted-ask.yaml');
    writeFileSync(
      unrestricted,
      'profile: shell-ok\ndescription: Shell without asking\nshell: unrestricted\napproval: none\n',
    );
    terminal = new TmuxSession(
      `node '${bin}' --base-url ${server.url} --profile '${unrestricted}'`,
      { RHO_HOME: home },
      work,
    );
    await terminal.waitFor(/Type a task/);
    terminal.type('wait a bit');
    terminal.keys('Enter');
    // The retry on its own line, its backoff counted down in the status line, then waiting again.
    await terminal.waitFor(
      /\nrate limited \(429\)[^\n]*, retrying in 2\.0 s, attempt \d+ of \d+\n.*: retrying in [12] s · \d+s in all/,
    );
    await terminal.waitFor(
      /waiting for the model \(retried\) \d+s · \d+s in all · [\d.K]+ tokens · context \d+% · Ctrl\+C cancels/,
    );
    firstAnswer.open();
    await terminal.waitFor(/→ bash\(sleep 30\)\n.*running bash \d+s · \d+s in all · [\d.K]+ tokens · context \d+%/);
    // Cancel the tool; the turn's usage line was printed when the model answered.
    terminal.keys('C-c');
    const after = await terminal.waitFor(/Cancelled[\s\S]*\[run: /);
    expect(after).toMatch(/turn 1: \+[\d.K]+ in, \+[\d.K]+ out, /);
    toolDone.open();
  });

  it('keeps text typed during a run, cursor included, and sends it as typed', async () => {
    const { home, work, profile } = setup();
    const release = gate();
    server = await startLoopbackServer({
      respond: async (_request, index): Promise<LoopbackStep> => {
        if (index === 0) {
          await release.wait;
          return { type: 'response', text: 'First answer, streamed slowly.', chunkSize: 3, delayMs: 5 };
        }
        return { type: 'response', text: 'Second answer.' };
      },
    });
    terminal = new TmuxSession(
      `node '${bin}' --base-url ${server.url} --profile '${profile}'`,
      { RHO_HOME: home },
      work,
    );
    await terminal.waitFor(/Type a task/);
    terminal.type('first task');
    terminal.keys('Enter');
    await terminal.waitFor(/waiting for the model/);
    // Typed while the agent works (no Enter), with a correction in the middle.
    terminal.type('next tsk');
    terminal.keys('Left', 'Left');
    terminal.type('a');
    release.open();
    await terminal.waitFor(/First answer, streamed slowly\.[\s\S]*\[run: [^\n]*\n› next task\s*$/);
    // The cursor is where it was: typing continues after "ta".
    terminal.type('X');
    await terminal.waitFor(/› next taXsk\s*$/);
    terminal.keys('BSpace');
    terminal.keys('Enter');
    await terminal.waitFor(/Second answer\./);
    const second = server.requests[1]!.body as { messages: { role: string; content: string }[] };
    expect(second.messages.at(-1)).toEqual({ role: 'user', content: 'next task' });
  });

  it('/status lists the project instruction files it read', async () => {
    const { home, work, profile } = setup();
    mkdirSync(join(work, '.git'));
    writeFileSync(join(work, 'AGENTS.md'), 'Use tabs.\n');
    server = await startLoopbackServer({ steps: [] });
    terminal = new TmuxSession(
      `node '${bin}' --base-url ${server.url} --profile '${profile}'`,
      { RHO_HOME: home },
      work,
    );
    await terminal.waitFor(/Type a task/);
    terminal.type('/status');
    terminal.keys('Enter');
    await terminal.waitFor(
      new RegExp(`instructions ${join(work, 'AGENTS.md').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
  });

  it('a one-shot run with its answer piped still asks on the terminal, and the piped answer is plain text', async () => {
    const { home, work, profile } = setup();
    server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'read', arguments: '{"path": "notes.txt"}' }] },
        { type: 'response', text: '**Three** lines.\n' },
      ],
    });
    terminal = new TmuxSession(
      `node '${bin}' --base-url ${server.url} --profile '${profile}' 'read notes' | cat > answer.md`,
      { RHO_HOME: home },
      work,
    );
    await terminal.waitFor(/approval needed read\(path='notes\.txt'\)[\s\S]*Allow\?/);
    terminal.type('y');
    terminal.keys('Enter');
    await terminal.waitFor(/\[exit 0\]/);
    expect(readFileSync(join(work, 'answer.md'), 'utf8')).toBe('**Three** lines.\n');
  });
});
