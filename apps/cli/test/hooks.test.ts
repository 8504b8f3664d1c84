import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage } from '@rho/core';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

// Hooks (issue 35) through the built CLI: a pre_tool deny reaches the model, a pre_tool allow
// cannot loosen the readonly profile, the session_end hook has finished when rho exits, and a
// malformed hooks: setting stops rho with one line and exit 2 before anything is made.

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function workspace(): { home: string; work: string; out: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-cli-hooks-')));
  const home = join(root, 'rho-home');
  const work = join(root, 'work');
  const out = join(root, 'out');
  for (const directory of [home, work, out]) mkdirSync(directory);
  return { home, work, out };
}

function toolResults(): string[] {
  const last = server!.requests.at(-1)!.body as { messages: ChatMessage[] };
  return last.messages.filter((message) => message.role === 'tool').map((message) => String(message.content));
}

function hookRecords(home: string): { event: string; outcome: string; decision?: string }[] {
  const [id] = readdirSync(join(home, 'sessions'));
  return readFileSync(join(home, 'sessions', id!, 'trace.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; event: string; outcome: string })
    .filter((record) => record.type === 'hook');
}

describe('hooks', () => {
  it('a pre_tool deny of the agent config reaches the model; the session_end hook of config.yaml ran once before rho exited', async () => {
    const { home, work, out } = workspace();
    writeFileSync(
      join(home, 'config.yaml'),
      `hooks:\n  session_end:\n    - command: cat > ${join(out, 'end.json')}\n      name: note\n`,
    );
    writeFileSync(
      join(work, 'agent.yaml'),
      'hooks:\n  pre_tool:\n    - command: "echo \'no listing today\' >&2; exit 2"\n      tools: [bash]\n',
    );
    server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command: 'ls' }) }] },
        { type: 'response', text: 'I was told no.' },
      ],
    });
    const outcome = await runRho(['--base-url', server.url, '--config', 'agent.yaml', '-y', 'list the files'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(toolResults()).toEqual(['Not run: denied by a pre_tool hook: no listing today']);
    expect(outcome.stdout).toContain('I was told no.');
    // Every tool call of the run was refused.
    expect(outcome.code).toBe(1);
    const ended = JSON.parse(readFileSync(join(out, 'end.json'), 'utf8')) as Record<string, unknown>;
    expect(ended).toMatchObject({ event: 'session_end', status: 'refused', record: { type: 'run_end' } });
    expect(hookRecords(home)).toEqual([
      expect.objectContaining({ event: 'pre_tool', outcome: 'ok', decision: 'deny' }),
      expect.objectContaining({ event: 'session_end', hook: 'note', outcome: 'ok' }),
    ]);
  }, 60_000);

  it('a pre_tool allow cannot loosen the readonly profile: no write tool, and its shell still refuses', async () => {
    const { home, work } = workspace();
    writeFileSync(join(home, 'config.yaml'), `hooks:\n  pre_tool:\n    - >-\n      echo '{"decision": "allow"}'\n`);
    server = await startLoopbackServer({
      steps: [
        {
          type: 'response',
          toolCalls: [
            { name: 'write', arguments: JSON.stringify({ path: 'made.txt', content: 'x' }) },
            { name: 'bash', arguments: JSON.stringify({ command: 'touch touched.txt' }) },
          ],
        },
        { type: 'response', text: 'done' },
      ],
    });
    const outcome = await runRho(['--base-url', server.url, '--profile', 'readonly', '-y', 'make files'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.stderr).not.toContain('rho:');
    expect(existsSync(join(work, 'made.txt'))).toBe(false);
    expect(existsSync(join(work, 'touched.txt'))).toBe(false);
    const [write, bash] = toolResults();
    expect(write).toMatch(/^Error: unknown tool 'write'/);
    expect(bash).toBe('Command blocked: touch is not in the restricted-mode allowlist: touch creates files');
    // The hook was asked about the shell call only: a tool the profile does not offer never reaches it.
    expect(hookRecords(home)).toEqual([expect.objectContaining({ event: 'pre_tool', decision: 'allow' })]);
  }, 60_000);

  it('a malformed hooks: setting: one line naming the file and the key, exit 2, no session made', async () => {
    const { home, work } = workspace();
    writeFileSync(
      join(home, 'config.yaml'),
      'hooks:\n  session_end:\n    - command: notify-send done\n      timeout: soon\n',
    );
    server = await startLoopbackServer({ steps: [] });
    const outcome = await runRho(['--base-url', server.url, 'go'], { env: { RHO_HOME: home }, cwd: work });
    expect(outcome.code).toBe(2);
    const lines = outcome.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `rho: ${join(home, 'config.yaml')}:1: 'hooks.session_end[0].timeout' must be a number of seconds above 0 and at most 600, for example 5 (got "soon").`,
    );
    expect(existsSync(join(home, 'sessions')) ? readdirSync(join(home, 'sessions')) : []).toEqual([]);
    expect(server.requests).toEqual([]);
  }, 60_000);
});
