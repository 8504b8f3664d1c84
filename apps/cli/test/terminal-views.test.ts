import { mkdtempSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { bin, runRho } from './support/run-rho.js';
import { hasTmux, TmuxSession } from './support/tmux.js';

// Issue 38, the terminal: tool results shown for their kind in a run and in `rho watch`, and
// the last turns of a resumed conversation in the REPL.

let server: LoopbackServer | undefined;
let terminal: TmuxSession | undefined;
afterEach(async () => {
  terminal?.kill();
  terminal = undefined;
  await server?.close();
  server = undefined;
});

function project(): { home: string; work: string } {
  const work = realpathSync(mkdtempSync(join(tmpdir(), 'rho-views-work-')));
  writeFileSync(join(work, 'notes.txt'), 'alpha\nbeta\n');
  return { home: mkdtempSync(join(tmpdir(), 'rho-views-home-')), work };
}

// One call a turn, so the lines come in a known order.
const steps = [
  {
    type: 'response' as const,
    text: 'Checking.',
    toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command: "printf 'one\\ntwo\\n'; exit 3" }) }],
  },
  { type: 'response' as const, toolCalls: [{ name: 'read', arguments: JSON.stringify({ path: 'notes.txt' }) }] },
  { type: 'response' as const, toolCalls: [{ name: 'read', arguments: JSON.stringify({ path: 'missing.txt' }) }] },
  { type: 'response' as const, text: 'The command failed with exit 3; notes.txt holds alpha and beta.' },
];
const profile = ['--profile', 'developer', '--backend', 'local', '-y'];

/** The lines from a call's arrow to the next arrow or the end of the run's tool lines. */
function callLines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.replace(/^\d\d:\d\d:\d\d /, '').replace(/ \(\d+(ms|\.\d+s|s)\)/, ''))
    .filter((line) => /^(→ | {2}[✓✗] | {4})/.test(line));
}

describe('tool results in the terminal', () => {
  it('a run and rho watch show output lines, the exit code, file lines and an error line, never the JSON', async () => {
    const { home, work } = project();
    server = await startLoopbackServer({ steps });
    const run = await runRho(['--base-url', server.url, ...profile, '-p', 'check'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(run.stderr).not.toContain('"output"');
    const expected = [
      "→ bash(printf 'one\\ntwo\\n'; exit 3)",
      '  ✗ bash: exit 3',
      '    │ one',
      '    │ two',
      "→ read(path='notes.txt')",
      '  ✓ read',
      '    │ alpha',
      '    │ beta',
      "→ read(path='missing.txt')",
      expect.stringMatching(/^ {2}✗ read: .*missing\.txt/),
    ];
    expect(callLines(run.stderr)).toEqual(expected);

    const [id] = readdirSync(join(home, 'sessions'));
    const watched = await runRho(['watch', id!], { env: { RHO_HOME: home } });
    expect(watched.code).toBe(0);
    expect(watched.stdout).not.toContain('"output"');
    expect(callLines(watched.stdout)).toEqual(
      expected.map((line) =>
        typeof line !== 'string'
          ? expect.stringMatching(/^ {2}✗ read failed: .*missing\.txt/)
          : line.replace(/^( {2}✓ read)$/, '$1 ok').replace(/^( {2}✗ bash)/, '$1 failed'),
      ),
    );
  });
});

describe.runIf(hasTmux)('resuming in the REPL', () => {
  it('shows the last turns of the conversation before the prompt', async () => {
    const { home, work } = project();
    server = await startLoopbackServer({ steps });
    await runRho(['--base-url', server.url, ...profile, '-p', 'check the build\nand the notes'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    const [id] = readdirSync(join(home, 'sessions'));
    terminal = new TmuxSession(`node '${bin}' --base-url ${server.url} --resume ${id}`, { RHO_HOME: home }, work);
    await terminal.waitFor(/Resumed session/);
    await terminal.waitFor(/The command failed with exit 3/);
    const screen = terminal.screen();
    expect(screen).toMatch(
      new RegExp(
        [
          'you › check the build',
          ' {6}and the notes',
          ' {2}Checking\\.',
          " {2}→ bash\\(printf 'one\\\\ntwo\\\\n'; exit 3\\)",
          " {2}→ read\\(path='notes\\.txt'\\)",
          " {2}→ read\\(path='missing\\.txt'\\)",
          ' {2}The command failed with exit 3; notes\\.txt holds alpha and beta\\.',
        ].join('\n'),
      ),
    );
  });
});
