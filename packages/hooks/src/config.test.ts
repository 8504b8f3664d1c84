import { ConfigError } from '@rho/core';
import { describe, expect, it } from 'vitest';
import { hookMatchesTool, parseHooksSources } from './config.js';

const parse = (value: unknown, env: Record<string, string> = {}) =>
  parseHooksSources([{ origin: '/home/u/.config/rho/config.yaml:3', value }], env);

function problem(value: unknown, env: Record<string, string> = {}): ConfigError {
  try {
    parse(value, env);
  } catch (error) {
    expect(ConfigError.isInstance(error)).toBe(true);
    return error as ConfigError;
  }
  throw new Error('no error');
}

describe('the hooks: setting', () => {
  it('reads commands, URLs, names, timeouts and tool lists; the first source first', () => {
    const hooks = parseHooksSources(
      [
        { origin: 'home.yaml:1', value: { session_end: ['notify-send done'] } },
        {
          origin: 'agent.yaml:4',
          value: {
            session_end: [{ url: 'https://example.com/h', secret_env: 'K', name: 'ci', timeout: 2.5 }],
            pre_tool: { command: './check', tools: ['shell', 'mcp__*'] },
          },
        },
      ],
      { K: 'key' },
    );
    expect(hooks.session_end).toEqual([
      {
        kind: 'command',
        command: 'notify-send done',
        label: 'notify-send done',
        timeoutMs: 10_000,
        origin: 'home.yaml:1',
      },
      {
        kind: 'http',
        url: 'https://example.com/h',
        label: 'ci',
        timeoutMs: 2500,
        origin: 'agent.yaml:4',
        secretEnv: 'K',
        secret: 'key',
      },
    ]);
    const [check] = hooks.pre_tool;
    expect(check).toMatchObject({ command: './check', tools: ['shell', 'mcp__*'] });
    expect(hookMatchesTool(check!, 'shell')).toBe(true);
    expect(hookMatchesTool(check!, 'mcp__github__search')).toBe(true);
    expect(hookMatchesTool(check!, 'write')).toBe(false);
    expect(hooks.error).toEqual([]);
  });

  it('refuses a malformed hook in one line naming the file, the key and what to write', () => {
    const cases: [unknown, string][] = [
      [['x'], "'hooks' must be a mapping of events"],
      [
        { sesion_end: ['x'] },
        "'hooks.sesion_end' is not an event: use one of session_end, waiting_approval, error, budget_reached, directive_received, pre_tool, post_tool (did you mean session_end?)",
      ],
      [{ error: [{ name: 'n' }] }, "'hooks.error[0]' needs exactly one of command"],
      [{ error: [{ command: 'a', url: 'https://x' }] }, "'hooks.error[0]' needs exactly one of command"],
      [{ error: [{ url: 'ftp://x' }] }, '\'hooks.error[0].url\' must be an http:// or https:// URL (got "ftp://x")'],
      [{ error: [{ command: 'a', timeout: 'soon' }] }, "'hooks.error[0].timeout' must be a number of seconds above 0"],
      [{ error: [{ command: 'a', timeout: 0 }] }, "'hooks.error[0].timeout' must be a number of seconds above 0"],
      [
        { error: [{ command: 'a', tools: ['shell'] }] },
        "'hooks.error[0].tools' applies only to pre_tool and post_tool hooks",
      ],
      [{ pre_tool: [{ command: 'a', tools: [] }] }, "'hooks.pre_tool[0].tools' must be a list of tool names"],
      [
        { pre_tool: [{ command: 'a', comand: 'b' }] },
        "'hooks.pre_tool[0].comand' is not a hook setting: use command, url, name, timeout, tools, secret_env (did you mean command?)",
      ],
      [{ error: [{ command: 'a', secret_env: 'K' }] }, "'hooks.error[0].secret_env' applies only to url hooks"],
      [
        { error: [{ url: 'https://x', secret_env: 'UNSET_K' }] },
        "'hooks.error[0].secret_env' names UNSET_K, which is not set",
      ],
    ];
    for (const [value, message] of cases) {
      const error = problem(value);
      expect(error.message).toContain(`/home/u/.config/rho/config.yaml:3: ${message}`);
      expect(error.message).not.toContain('\n');
      expect(error.file).toBe('/home/u/.config/rho/config.yaml');
      expect(error.line).toBe(3);
    }
    expect(problem({ error: [{ command: 'a', timeout: 'soon' }] }).field).toBe('hooks.error[0].timeout');
  });
});
