import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
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
  it("uses ~/.config/rho-agent/databases.yaml when rho has none, saying so once on stderr", async () => {
    const { home, rhoAgentHome, work } = workspace();
    // A zero-length file is an empty SQLite database.
    writeFileSync(join(work, 'empty.sqlite'), '');
    writeFileSync(join(rhoAgentHome, 'databases.yaml'), `databases:\n  scratch:\n    type: sqlite\n    path: ${join(work, 'empty.sqlite')}\n`);
    server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'sqlite', arguments: '{"operation": "list_tables"}' }] },
        { type: 'response', text: 'No tables.' },
      ],
    });
    const outcome = await runRho(['--base-url', server.url, '--model', 'gpt-4o-mini', '--auto-approve', 'List the tables'], { env: { HOME: home }, cwd: work });
    expect(outcome.code, outcome.stderr).toBe(0);
    const notices = outcome.stderr.split('\n').filter((line) => line.includes("rho-agent's database aliases"));
    expect(notices).toEqual([
      `Warning: Using rho-agent's database aliases from ${join(rhoAgentHome, 'databases.yaml')}, as rho has none of its own (--db-config, RHO_DB_CONFIG, ${join(home, '.config', 'rho', 'databases.yaml')}). Copy the file to ${join(home, '.config', 'rho', 'databases.yaml')} to make it rho's.`,
    ]);
    const toolMessage = (server.requests[1]!.body as { messages: { role: string; content: string }[] }).messages.find((message) => message.role === 'tool');
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
    const outcome = await runRho(['--base-url', server.url, '--model', 'gpt-4o-mini', '--profile', 'eval', 'Write a file'], { env: { HOME: home }, cwd: work });
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(readFileSync(join(work, 'made.txt'), 'utf8')).toBe('by eval');
    const directory = onlySession(rhoHome);
    expect(readFileSync(join(directory, 'config.yaml'), 'utf8')).toMatch(/^profile: eval$/m);
    expect(JSON.parse(readFileSync(join(directory, 'meta.json'), 'utf8'))).toMatchObject({ profile: 'eval' });

    const viaEnv = mkdtempSync(join(home, 'env-'));
    const second = await runRho(['--base-url', server.url, '--model', 'gpt-4o-mini', 'Say again'], { env: { HOME: home, RHO_HOME: viaEnv, RHO_PROFILE: 'eval' }, cwd: work });
    expect(second.code, second.stderr).toBe(0);
    expect(readFileSync(join(onlySession(viaEnv), 'config.yaml'), 'utf8')).toMatch(/^profile: eval$/m);
  });
});
