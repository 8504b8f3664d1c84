import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { State } from '@rho/core';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';

// Drives the REPL in a real terminal: tmux runs `rho`, send-keys types, capture-pane reads the screen.
import { hasTmux, TmuxSession } from './support/tmux.js';
import { bin } from './support/run-rho.js';

let server: LoopbackServer | undefined;
let terminal: TmuxSession | undefined;
afterEach(async () => {
  terminal?.kill();
  terminal = undefined;
  await server?.close();
  server = undefined;
});

function setup(): { home: string; work: string; profile: string } {
  const root = mkdtempSync(join(tmpdir(), 'rho-repl-'));
  const work = mkdtempSync(join(root, 'work-'));
  writeFileSync(join(work, 'a.txt'), 'hello\n');
  const profile = join(root, 'ask-everything.yaml');
  writeFileSync(profile, 'profile: ask-everything\ndescription: Asks before every tool call\napproval: all\n');
  return { home: join(root, 'home'), work, profile };
}

describe.runIf(hasTmux)('the REPL in a terminal', () => {
  it('streams a task with tool lines and an approval, compacts, cancels with Ctrl+C, and exits', async () => {
    const { home, work, profile } = setup();
    server = await startLoopbackServer({
      steps: [
        {
          type: 'response',
          text: 'Looking around.',
          toolCalls: [{ name: 'list', arguments: '{"path": "."}' }],
          chunkSize: 4,
          delayMs: 10,
        },
        { type: 'response', text: 'There is one file, a.txt.', chunkSize: 4, delayMs: 10 },
        { type: 'response', text: 'Summary: listed the directory; it holds a.txt.' },
        { type: 'hang' },
      ],
    });
    terminal = new TmuxSession(
      `node '${bin}' --base-url ${server.url} --profile '${profile}'`,
      { RHO_HOME: home },
      work,
    );
    await terminal.waitFor(/Type a task/);
    terminal.type('what is here?');
    terminal.keys('Enter');
    await terminal.waitFor(
      /Allow\? yes \/ No \/ c: always this exact call \/ a: always list \(except dangerous patterns\) \(Enter = no\)/,
    );
    expect(terminal.screen()).toMatch(
      /approval needed list\(path='\.'\)\n {2}risk: profile ask-everything requires approval for every tool call/,
    );
    terminal.type('y');
    terminal.keys('Enter');
    const afterRun = await terminal.waitFor(/There is one file, a\.txt\.[\s\S]*\[run: .* · session: /);
    expect(afterRun).toMatch(/Looking around\./);
    expect(afterRun).toMatch(/→ list\(path='\.'\)/);
    expect(afterRun).toMatch(/✓ list/);

    terminal.type('/compact keep file names');
    terminal.keys('Enter');
    await terminal.waitFor(/Compacted: \d+ -> \d+ tokens/);
    const compactRequest = server.requests[2]!.body as { messages: { content: string }[]; stream?: boolean };
    expect(compactRequest.messages.at(-1)!.content).toMatch(/User guidance: keep file names$/);

    terminal.type('now wait');
    terminal.keys('Enter');
    await new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + 10_000;
      const timer = setInterval(() => {
        if (server!.requests.length >= 4) {
          clearInterval(timer);
          resolve();
        } else if (Date.now() > deadline) {
          clearInterval(timer);
          reject(new Error('the fourth request never came'));
        }
      }, 20);
    });
    terminal.keys('C-c');
    await terminal.waitFor(/Cancelled/);
    terminal.type('/exit');
    terminal.keys('Enter');
    await terminal.waitFor(/Goodbye! Session saved: [0-9a-f]{8}[\s\S]*\[exit 0\]/);

    const sessions = readdirSync(join(home, 'sessions'));
    expect(sessions).toHaveLength(1);
    const trace = readFileSync(join(home, 'sessions', sessions[0]!, 'trace.jsonl'), 'utf8');
    const records = trace
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; status?: string });
    expect(records.filter((record) => record.type === 'compact')).toHaveLength(1);
    expect(records.filter((record) => record.type === 'run_end').map((record) => record.status)).toEqual([
      'completed',
      'cancelled',
    ]);
    expect(State.fromJsonl(trace).status).toBe('cancelled');
  });

  it('remembers "always" per tool, rejects with "n", and takes multi-line input', async () => {
    const { home, work, profile } = setup();
    server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'list', arguments: '{}' }] },
        { type: 'response', toolCalls: [{ name: 'list', arguments: '{"path": "."}' }] },
        { type: 'response', text: 'Listed twice.' },
        { type: 'response', toolCalls: [{ name: 'read', arguments: '{"path": "a.txt"}' }] },
        { type: 'response', text: 'Understood.' },
      ],
    });
    terminal = new TmuxSession(
      `node '${bin}' --base-url ${server.url} --profile '${profile}'`,
      { RHO_HOME: home },
      work,
    );
    await terminal.waitFor(/Type a task/);
    terminal.type('first line\\');
    terminal.keys('Enter');
    terminal.type('second line');
    terminal.keys('Enter');
    await terminal.waitFor(/Allow\?/);
    terminal.type('a');
    terminal.keys('Enter');
    await terminal.waitFor(/Listed twice\./);
    // The second list call was not asked about.
    expect(terminal.screen().match(/Allow\?/g)).toHaveLength(1);
    const firstRequest = server.requests[0]!.body as { messages: { role: string; content: string }[] };
    expect(firstRequest.messages.at(-1)).toEqual({ role: 'user', content: 'first line\nsecond line' });

    terminal.type('read it');
    terminal.keys('Enter');
    await terminal.waitFor(/approval needed read\(path='a\.txt'\)[\s\S]*Allow\?/);
    terminal.type('n');
    terminal.keys('Enter');
    await terminal.waitFor(/read\(path='a\.txt'\) blocked: rejected by the user/);
    terminal.keys('C-d');
    await terminal.waitFor(/Goodbye!/);
    const last = server.requests.at(-1)!.body as { messages: { role: string; content: string }[] };
    expect(last.messages.at(-1)).toEqual({ role: 'user', content: 'read it' });
    expect(server.requests).toHaveLength(4);
  });
});
