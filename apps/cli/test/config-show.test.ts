/**
 * `rho config show [--sources] [--json]` through the built CLI: the settings a run would use, with
 * where each came from, for one key of each source; secrets never printed; a bad file is exit 2
 * naming the file, the key and the line.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

const root = mkdtempSync(join(tmpdir(), 'rho-config-show-'));
const home = join(root, 'home');
mkdirSync(home);
afterAll(() => rmSync(root, { recursive: true, force: true }));

writeFileSync(
  join(home, 'config.yaml'),
  ['otel:', '  endpoint: http://collector.example:4318', 'mcp_servers:', '  files: {command: mcp-files}', ''].join(
    '\n',
  ),
);
const agent = join(root, 'agent.yaml');
writeFileSync(
  agent,
  ['model: from-agent', 'profile: developer', 'budgets:', '  max_turns: 7', 'first_byte_timeout: 30', ''].join('\n'),
);
const key = 'sk-config-show-secret-0123456789';
const env = { RHO_HOME: home, OPENAI_API_KEY: key, RHO_IDLE_TIMEOUT: '45', OPENAI_MODEL: 'from-env' };

describe('rho config show', () => {
  it('reports each value and where it came from, by precedence', async () => {
    const outcome = await runRho(['config', 'show', '--json', '--sources', '--config', agent, '--max-turns', '9'], {
      env,
      cwd: root,
    });
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    const shown = JSON.parse(outcome.stdout) as { settings: Record<string, unknown>; sources: Record<string, string> };
    // A flag beats the agent config.
    expect(shown.settings['budgets.max_turns']).toBe(9);
    expect(shown.sources['budgets.max_turns']).toBe('--max-turns');
    // The agent config's model beats OPENAI_MODEL (a declared exception), with its line.
    expect(shown.settings['model']).toBe('from-agent');
    expect(shown.sources['model']).toBe(`${agent}:1`);
    expect(shown.sources['first_byte_timeout']).toBe(`${agent}:5`);
    // The environment, and $RHO_HOME/config.yaml with its line.
    expect(shown.settings['idle_timeout']).toBe(45);
    expect(shown.sources['idle_timeout']).toBe('env RHO_IDLE_TIMEOUT');
    expect(shown.settings['otel.endpoint']).toBe('http://collector.example:4318');
    expect(shown.sources['otel.endpoint']).toBe(`${join(home, 'config.yaml')}:2`);
    expect(shown.sources['mcp_servers']).toBe(`${join(home, 'config.yaml')}:3`);
    // Secrets are never printed.
    expect(outcome.stdout).not.toContain(key);
    expect(shown.settings['api_key']).toBe('[secret]');
  });

  it('prints a readable listing by section, sources on request', async () => {
    const plain = await runRho(['config', 'show', '--config', agent], { env, cwd: root });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^\[model\]\nmodel: from-agent\n/);
    expect(plain.stdout).toContain('\n[budgets]\n');
    expect(plain.stdout).not.toContain('(env ');
    const withSources = await runRho(['config', 'show', '--sources', '--config', agent], { env, cwd: root });
    expect(withSources.stdout).toContain(`model: from-agent  (${agent}:1)`);
    expect(withSources.stdout).toContain('idle_timeout: 45  (env RHO_IDLE_TIMEOUT)');
    expect(withSources.stdout).not.toContain(key);
  });

  it('refuses a wrong value with the file, the key and the line (exit 2)', async () => {
    const bad = join(root, 'bad.yaml');
    writeFileSync(bad, ['model: m', 'budgets:', '  max_turns: -3', ''].join('\n'));
    const outcome = await runRho(['config', 'show', '--config', bad], { env, cwd: root });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain(`${bad}:3: 'budgets.max_turns'`);
    expect(outcome.stdout).toBe('');
  });

  it('warns of an unknown key with a suggestion', async () => {
    const typo = join(root, 'typo.yaml');
    writeFileSync(typo, ['modle: m', ''].join('\n'));
    const outcome = await runRho(['config', 'show', '--config', typo], { env, cwd: root });
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toContain(`${typo}:1: unknown key 'modle' is ignored (did you mean 'model'?)`);
  });
});
