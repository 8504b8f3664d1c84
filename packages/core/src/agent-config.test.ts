import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { pythonTracesDir } from './testing/fixtures.js';
import { agentConfigToDocument, loadAgentConfig, parseAgentConfig, unknownAgentConfigKeys } from './agent-config.js';

const fixtures = pythonTracesDir;

describe('agent config', () => {
  it('loads the config.yaml of every Python session', () => {
    for (const name of readdirSync(fixtures)) {
      const config = loadAgentConfig(join(fixtures, name, 'config.yaml'));
      expect(config.model).toBe('gpt-5-mini');
      expect(typeof config.profile).toBe('string');
    }
  });

  it('names unknown keys with the known key they most likely mean', () => {
    for (const name of readdirSync(fixtures))
      expect(unknownAgentConfigKeys(loadAgentConfig(join(fixtures, name, 'config.yaml')))).toEqual([]);
    const config = parseAgentConfig({
      tools: ['x'],
      plugins: ['y'],
      modle: 'gpt-4o',
      'base-url': 'http://x',
      max_turns: 3,
      labels: ['x'],
      tool_packages: ['./tools.js'],
    });
    expect(config.toolPackages).toEqual(['./tools.js']);
    expect(unknownAgentConfigKeys(config)).toEqual([
      { key: 'tools', suggestion: 'tool_packages' },
      { key: 'plugins', suggestion: 'tool_packages' },
      { key: 'modle', suggestion: 'model' },
      { key: 'base-url', suggestion: 'base_url' },
      { key: 'max_turns', suggestion: 'budgets' },
      { key: 'labels' },
    ]);
    expect(agentConfigToDocument(config)).toMatchObject({ tool_packages: ['./tools.js'] });
    expect(() => parseAgentConfig({ tool_packages: 'word-count' }, 'a.yaml')).toThrow(
      'a.yaml: \'tool_packages\' must be a list of package names or paths (got "word-count").',
    );
  });

  it('keeps mcp_servers as written (${ENV} unresolved), suggests it for near misses, and writes it back', () => {
    const servers = {
      files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '${HOME}'] },
      web: { url: 'http://127.0.0.1:3001/mcp', headers: { Authorization: 'Bearer ${TOKEN}' } },
    };
    const config = parseAgentConfig({ mcp_servers: servers, mcpServers: {} });
    expect(config.mcpServers).toEqual(servers);
    expect(unknownAgentConfigKeys(config)).toEqual([{ key: 'mcpServers', suggestion: 'mcp_servers' }]);
    expect(agentConfigToDocument(config)).toMatchObject({ mcp_servers: servers });
    expect(() => parseAgentConfig({ mcp_servers: ['files'] }, 'a.yaml')).toThrow(
      'a.yaml: \'mcp_servers\' must be a mapping of server names to settings (command and args, or url) (got ["files"]).',
    );
  });

  it('keeps fleet as written and writes it back; refuses a fleet that is not a mapping', () => {
    const fleet = { url: 'postgres://rho:${FLEET_PASSWORD}@db/rho', schema: 'team' };
    const config = parseAgentConfig({ fleet });
    expect(config.fleet).toEqual(fleet);
    expect(unknownAgentConfigKeys(config)).toEqual([]);
    expect(agentConfigToDocument(config)).toMatchObject({ fleet });
    expect(() => parseAgentConfig({ fleet: 'postgres://db' }, 'a.yaml')).toThrow(/a\.yaml: 'fleet' must be a mapping/);
  });

  it('round-trips through YAML, keeping unknown keys', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'rho-config-')), 'agent.yaml');
    const config = parseAgentConfig({
      system_prompt: 'prompt.md',
      vars: { env: 'prod', n: 3 },
      model: 'gpt-4o',
      profile: 'developer',
      budgets: { max_turns: 5, max_cost_usd: 0.5 },
      auto_approve: false,
      labels: ['x'],
    });
    expect(config).toMatchObject({
      systemPrompt: 'prompt.md',
      vars: { env: 'prod', n: '3' },
      budgets: { maxTurns: 5, maxCostUsd: 0.5 },
      extras: { labels: ['x'] },
    });
    writeFileSync(path, stringify(agentConfigToDocument(config)));
    expect(loadAgentConfig(path)).toEqual(config);
  });

  it('reads the model timeouts and retry count, refusing bad values, and writes them back', () => {
    const config = parseAgentConfig({ first_byte_timeout: 300, idle_timeout: 2.5, max_retries: 0 });
    expect(config).toMatchObject({ firstByteTimeout: 300, idleTimeout: 2.5, maxRetries: 0, extras: {} });
    expect(agentConfigToDocument(config)).toMatchObject({ first_byte_timeout: 300, idle_timeout: 2.5, max_retries: 0 });
    expect(() => parseAgentConfig({ first_byte_timeout: 0 }, 'a.yaml')).toThrow(
      "a.yaml: 'first_byte_timeout' must be a positive number of seconds (got 0).",
    );
    expect(() => parseAgentConfig({ idle_timeout: '5s' }, 'a.yaml')).toThrow(
      'a.yaml: \'idle_timeout\' must be a positive number of seconds (got "5s").',
    );
    expect(() => parseAgentConfig({ max_retries: 1.5 }, 'a.yaml')).toThrow(
      "a.yaml: 'max_retries' must be a whole number, 0 or more (got 1.5).",
    );
  });

  it('reads the context window and the per-model windows, refusing bad values, and writes them back', () => {
    const config = parseAgentConfig({ context_window: 65_536, context_windows: { 'qwen3-coder': 131_072 } });
    expect(config).toMatchObject({ contextWindow: 65_536, contextWindows: { 'qwen3-coder': 131_072 }, extras: {} });
    expect(agentConfigToDocument(config)).toMatchObject({
      context_window: 65_536,
      context_windows: { 'qwen3-coder': 131_072 },
    });
    expect(() => parseAgentConfig({ context_window: '32k' }, 'a.yaml')).toThrow(
      'a.yaml: \'context_window\' must be a whole number of tokens, for example 32768 (got "32k").',
    );
    expect(() => parseAgentConfig({ context_windows: { m: 0 } }, 'a.yaml')).toThrow(
      "a.yaml: 'context_windows.m' must be a whole number of tokens, for example 32768 (got 0).",
    );
  });

  it('says which field is wrong and what it must be', () => {
    expect(() => parseAgentConfig({ model: 5 }, 'a.yaml')).toThrow("a.yaml: 'model' must be a string (got 5).");
    expect(() => parseAgentConfig({ budgets: { max_turns: -1 } }, 'a.yaml')).toThrow(
      "a.yaml: 'budgets.max_turns' must be a positive number (got -1).",
    );
    expect(() => parseAgentConfig(['x'], 'a.yaml')).toThrow('Config file must contain a YAML mapping: a.yaml');
    expect(() => loadAgentConfig('/nonexistent/agent.yaml')).toThrow('Config file not found: /nonexistent/agent.yaml');
    const bad = join(mkdtempSync(join(tmpdir(), 'rho-config-')), 'bad.yaml');
    writeFileSync(bad, 'model: [unclosed');
    expect(() => loadAgentConfig(bad)).toThrow(/Invalid YAML in config file/);
  });
});
