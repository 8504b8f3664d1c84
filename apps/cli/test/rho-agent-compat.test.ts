import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { State } from '@rho/core';
import type { ChatMessage } from '@rho/core';
import { pythonTracesDir, startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

/** A fresh HOME (with rho-agent's folder), RHO_HOME and working directory. */
function workspace(): { root: string; home: string; rhoHome: string; rhoAgentHome: string; work: string } {
  const root = mkdtempSync(join(tmpdir(), 'rho-compat-'));
  const home = join(root, 'user');
  const rhoAgentHome = join(home, '.config', 'rho-agent');
  mkdirSync(rhoAgentHome, { recursive: true });
  return { root, home, rhoHome: join(home, '.config', 'rho'), rhoAgentHome, work: mkdtempSync(join(root, 'work-')) };
}

function onlySession(rhoHome: string): string {
  const sessions = readdirSync(join(rhoHome, 'sessions'));
  expect(sessions).toHaveLength(1);
  return join(rhoHome, 'sessions', sessions[0]!);
}

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('coming from rho-agent', () => {
  it('uses ~/.config/rho-agent/databases.yaml when rho has none, saying so once on stderr', async () => {
    const { home, rhoAgentHome, work } = workspace();
    // A zero-length file is an empty SQLite database.
    writeFileSync(join(work, 'empty.sqlite'), '');
    writeFileSync(
      join(rhoAgentHome, 'databases.yaml'),
      `databases:\n  scratch:\n    type: sqlite\n    path: ${join(work, 'empty.sqlite')}\n`,
    );
    server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'sqlite', arguments: '{"operation": "list_tables"}' }] },
        { type: 'response', text: 'No tables.' },
      ],
    });
    const outcome = await runRho(
      ['--base-url', server.url, '--model', 'gpt-4o-mini', '--auto-approve', 'List the tables'],
      { env: { HOME: home }, cwd: work },
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    const notices = outcome.stderr.split('\n').filter((line) => line.includes("rho-agent's database aliases"));
    expect(notices).toEqual([
      `Warning: Using rho-agent's database aliases from ${join(rhoAgentHome, 'databases.yaml')}, as rho has none of its own (--db-config, RHO_DB_CONFIG, ${join(home, '.config', 'rho', 'databases.yaml')}). Copy the file to ${join(home, '.config', 'rho', 'databases.yaml')} to make it rho's.`,
    ]);
    const toolMessage = (server.requests[1]!.body as { messages: { role: string; content: string }[] }).messages.find(
      (message) => message.role === 'tool',
    );
    expect(toolMessage?.content).toBe('No tables found matching pattern: %');
  });

  it('keeps the profile name eval in the saved config and meta.json, and runs it as unrestricted', async () => {
    const { home, rhoHome, work } = workspace();
    server = await startLoopbackServer({
      steps: [
        // unrestricted: writes are allowed without approval (stdin is not a terminal: no one could approve).
        { type: 'response', toolCalls: [{ name: 'write', arguments: '{"path": "made.txt", "content": "by eval"}' }] },
        { type: 'response', text: 'Written.' },
        { type: 'response', text: 'Again.' },
      ],
    });
    const outcome = await runRho(
      ['--base-url', server.url, '--model', 'gpt-4o-mini', '--profile', 'eval', 'Write a file'],
      { env: { HOME: home }, cwd: work },
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(readFileSync(join(work, 'made.txt'), 'utf8')).toBe('by eval');
    const directory = onlySession(rhoHome);
    expect(readFileSync(join(directory, 'config.yaml'), 'utf8')).toMatch(/^profile: eval$/m);
    expect(JSON.parse(readFileSync(join(directory, 'meta.json'), 'utf8'))).toMatchObject({ profile: 'eval' });

    const viaEnv = mkdtempSync(join(home, 'env-'));
    const second = await runRho(['--base-url', server.url, '--model', 'gpt-4o-mini', 'Say again'], {
      env: { HOME: home, RHO_HOME: viaEnv, RHO_PROFILE: 'eval' },
      cwd: work,
    });
    expect(second.code, second.stderr).toBe(0);
    expect(readFileSync(join(onlySession(viaEnv), 'config.yaml'), 'utf8')).toMatch(/^profile: eval$/m);
  });

  it("reads RHO_AGENT_PROFILE, RHO_AGENT_REASONING_EFFORT and RHO_AGENT_SERVICE_TIER when rho's own are not set", async () => {
    const { home, rhoHome, work } = workspace();
    server = await startLoopbackServer({
      steps: [
        { type: 'response', text: 'ok' },
        { type: 'response', text: 'ok' },
      ],
    });
    const env = {
      HOME: home,
      RHO_AGENT_PROFILE: 'developer',
      RHO_AGENT_REASONING_EFFORT: 'low',
      RHO_AGENT_SERVICE_TIER: 'flex',
    };
    const outcome = await runRho(['--base-url', server.url, '--model', 'gpt-5-mini', 'hi'], { env, cwd: work });
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(onlySession(rhoHome), 'meta.json'), 'utf8'))).toMatchObject({
      profile: 'developer',
    });
    expect(server.requests[0]!.body).toMatchObject({ reasoning_effort: 'low', service_tier: 'flex' });
    const ownHome = mkdtempSync(join(home, 'own-'));
    const own = await runRho(['--base-url', server.url, 'hi'], {
      env: { ...env, RHO_HOME: ownHome, RHO_PROFILE: 'readonly' },
      cwd: work,
    });
    expect(own.code, own.stderr).toBe(0);
    expect(JSON.parse(readFileSync(join(onlySession(ownHome), 'meta.json'), 'utf8'))).toMatchObject({
      profile: 'readonly',
    });
  });

  describe('sessions in ~/.config/rho-agent/sessions', () => {
    /** Two sessions the Python rho-agent wrote (the fixtures), where its CLI kept them. */
    function withRhoAgentSessions(): ReturnType<typeof workspace> & { sessions: string } {
      const space = workspace();
      const sessions = join(space.rhoAgentHome, 'sessions');
      cpSync(join(pythonTracesDir, 'a-readonly-text'), join(sessions, '3f9a2c1e'), { recursive: true });
      cpSync(join(pythonTracesDir, 'e-multiturn-resume'), join(sessions, '7b1d0e55'), { recursive: true });
      return { ...space, sessions };
    }

    it("are listed by --list and ps, after rho's own and marked as rho-agent's", async () => {
      const { home, work, sessions } = withRhoAgentSessions();
      const list = await runRho(['--list'], { env: { HOME: home }, cwd: work });
      expect(list.code, list.stderr).toBe(0);
      // The table and words of rho ps (issue 17).
      expect(list.stdout).toContain(
        `No sessions in ${join(home, '.config', 'rho', 'sessions')} yet; run a task first.\n\nSessions of rho-agent (${sessions}):\n`,
      );
      // (The AGE column may tick between the two runs.)
      const withoutAge = (text: string) => text.replace(/\b\d+(h\d+m|m\d+s|s|d)\b/g, 'AGE');
      expect(withoutAge(list.stdout)).toBe(
        withoutAge((await runRho(['ps', '--limit', '20'], { env: { HOME: home }, cwd: work })).stdout),
      );
      expect(list.stdout).toMatch(/^7b1d0e55 +completed +gpt-5-mini .*What is 2\+2\?/m);
      expect(list.stdout).toMatch(/^3f9a2c1e +completed +gpt-5-mini /m);
      const listJson = JSON.parse((await runRho(['--list', '--json'], { env: { HOME: home }, cwd: work })).stdout) as {
        id: string;
        source: string;
        directory: string;
      }[];
      expect(listJson.map((entry) => [entry.id, entry.source, entry.directory])).toEqual([
        ['7b1d0e55', 'rho-agent', join(sessions, '7b1d0e55')],
        ['3f9a2c1e', 'rho-agent', join(sessions, '3f9a2c1e')],
      ]);

      const ps = await runRho(['ps'], { env: { HOME: home }, cwd: work });
      expect(ps.code, ps.stderr).toBe(0);
      expect(ps.stdout).toContain(`Sessions of rho-agent (${sessions}):\n`);
      expect(ps.stdout).toMatch(/^7b1d0e55 +completed/m);
      const psJson = JSON.parse((await runRho(['ps', '--json'], { env: { HOME: home }, cwd: work })).stdout) as {
        id: string;
        source?: string;
      }[];
      expect(psJson.map((entry) => [entry.id, entry.source])).toEqual([
        ['7b1d0e55', 'rho-agent'],
        ['3f9a2c1e', 'rho-agent'],
      ]);
      // An explicit DIR lists only that directory.
      const explicit = JSON.parse(
        (await runRho(['ps', '--json', join(home, '.config', 'rho', 'none')], { env: { HOME: home }, cwd: work }))
          .stdout || '[]',
      ) as unknown[];
      expect(explicit).toEqual([]);
    });

    it('are exported by id prefix', async () => {
      const { home, work } = withRhoAgentSessions();
      const exported = await runRho(['export', '7b1d'], { env: { HOME: home }, cwd: work });
      expect(exported.code, exported.stderr).toBe(0);
      const trajectory = JSON.parse(exported.stdout) as {
        session_id: string;
        steps: { source: string; message: string }[];
      };
      expect(trajectory.session_id).toBe('7b1d0e55');
      expect(trajectory.steps.some((step) => step.source === 'user' && step.message === 'What is 2+2?')).toBe(true);
      const missing = await runRho(['export', 'ffff'], { env: { HOME: home }, cwd: work });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("rho-agent's sessions in");
    });

    it("are resumed by id prefix, and rho's own sessions win over them", async () => {
      const { home, rhoHome, work, sessions } = withRhoAgentSessions();
      const directory = join(sessions, '7b1d0e55');
      const before = State.fromJsonl(readFileSync(join(directory, 'trace.jsonl')));
      server = await startLoopbackServer({
        steps: [
          { type: 'response', text: 'Continuing from rho-agent.' },
          { type: 'response', text: 'Own.' },
          { type: 'response', text: 'Own again.' },
        ],
      });
      const resumed = await runRho(['--base-url', server.url, '--working-dir', work, '-r', '7b1d', 'One more thing.'], {
        env: { HOME: home },
        cwd: work,
      });
      expect(resumed.code, resumed.stderr).toBe(0);
      const sent = (server.requests[0]!.body as { messages: ChatMessage[] }).messages.slice(1);
      expect(sent.length).toBe(before.messages.length + 1);
      expect(sent[0]).toEqual(before.messages[0]);
      expect(sent.at(-1)).toEqual({ role: 'user', content: 'One more thing.' });
      const after = State.fromJsonl(readFileSync(join(directory, 'trace.jsonl')));
      expect(after.messages.at(-1)).toEqual({ role: 'assistant', content: 'Continuing from rho-agent.' });

      // A session of rho's own whose id shares the prefix is the one resumed.
      const own = await runRho(['--base-url', server.url, '--working-dir', work, 'hello'], {
        env: { HOME: home },
        cwd: work,
      });
      expect(own.code, own.stderr).toBe(0);
      const ownId = readdirSync(join(rhoHome, 'sessions'))[0]!;
      const again = await runRho(['--base-url', server.url, '--working-dir', work, '-r', 'latest', 'again'], {
        env: { HOME: home },
        cwd: work,
      });
      expect(again.code, again.stderr).toBe(0);
      const ownTrace = State.fromJsonl(readFileSync(join(rhoHome, 'sessions', ownId, 'trace.jsonl')));
      expect(ownTrace.messages.at(-1)).toEqual({ role: 'assistant', content: 'Own again.' });
    });
  });
});
