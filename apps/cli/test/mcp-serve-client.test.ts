// Issue 39: rho driving rho. rho's own MCP client (`mcp_servers:` of $RHO_HOME/config.yaml) starts
// `rho mcp serve` over stdio; an outer run's model calls the served run_task, whose inner session
// asks the same loopback model, and the inner answer comes back as the tool result. The same
// server through `rho mcp tools` and `rho mcp call`.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage } from '@rho/core';
import { startLoopbackServer, type LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServeSetup } from './support/mcp-serve.js';
import { ps, serveSetup } from './support/mcp-serve.js';
import { bin, runRho } from './support/run-rho.js';

let model: LoopbackServer | undefined;
afterEach(async () => {
  await model?.close();
  model = undefined;
});

/** A home whose mcp_servers has `rho`: the built CLI's `mcp serve`, with the model's endpoint in its env. */
function withServedRho(url: string): ServeSetup {
  const s = serveSetup('', url);
  const env = { RHO_HOME: s.home, OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: url, OPENAI_MODEL: 'loopback-model' };
  writeFileSync(
    join(s.home, 'config.yaml'),
    [
      'mcp_servers:',
      '  rho:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(bin)}, mcp, serve]`,
      `    env: ${JSON.stringify(env)}`,
      '',
    ].join('\n'),
  );
  return s;
}

describe('rho driving rho through rho mcp serve', () => {
  it("an outer run calls the served run_task; the inner session's answer is the tool result; rho ps lists both", async () => {
    model = await startLoopbackServer({
      steps: [
        {
          type: 'response',
          toolCalls: [
            {
              id: 'call_inner',
              name: 'rho__run_task',
              arguments: JSON.stringify({ prompt: 'What is the inner answer?', wait: true }),
            },
          ],
        },
        // The inner session's only model call, made while the outer run waits for the tool.
        { type: 'response', text: 'The inner answer is 7.' },
        { type: 'response', text: 'Rho said 7.' },
      ],
    });
    const s = withServedRho(model.url);
    const outer = await runRho(
      ['--base-url', model.url, '--profile', 'developer', '-y', '--json', '-p', 'Ask another rho'],
      { env: { RHO_HOME: s.home, OPENAI_API_KEY: 'test-key', OPENAI_MODEL: 'loopback-model' }, cwd: s.work },
    );
    expect(outer.code, outer.stderr).toBe(0);
    expect(model.requests).toHaveLength(3);
    const offered = (model.requests[0]!.body as { tools: { function: { name: string } }[] }).tools.map(
      (tool) => tool.function.name,
    );
    expect(offered).toEqual(expect.arrayContaining(['rho__run_task', 'rho__policy_check', 'rho__session_status']));
    // The inner session was asked the inner prompt, as a session of its own.
    const inner = model.requests[1]!.body as { messages: ChatMessage[] };
    expect(inner.messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([
      'What is the inner answer?',
    ]);
    const result = (model.requests[2]!.body as { messages: ChatMessage[] }).messages.find(
      (message) => message.role === 'tool',
    );
    expect(String(result?.content)).toContain('The inner answer is 7.');
    expect(String(result?.content)).toContain('"status": "completed"');
    const sessions = ps(s);
    expect(sessions).toHaveLength(2);
    const innerSession = sessions.find((session) => session.first_prompt === 'What is the inner answer?');
    const outerSession = sessions.find((session) => session.first_prompt === 'Ask another rho');
    expect(innerSession).toMatchObject({ status: 'completed', profile: 'readonly' });
    expect(innerSession!.labels).toEqual({ mcp: '', 'mcp-client:rho': '' });
    expect(outerSession).toMatchObject({ status: 'completed', profile: 'developer' });
    expect(outerSession!.labels ?? {}).toEqual({});
    expect(String(result?.content)).toContain(String(innerSession!.id));
  }, 120_000);

  it('rho mcp tools lists the served tools; rho mcp call runs policy_check', async () => {
    model = await startLoopbackServer();
    const s = withServedRho(model.url);
    const env = { RHO_HOME: s.home };
    const tools = await runRho(['mcp', 'tools', 'rho', '--profile', 'developer', '--json'], { env, cwd: s.work });
    expect(tools.code, tools.stderr).toBe(0);
    const rows = JSON.parse(tools.stdout) as { name: string; decision: string; readOnlyHint: boolean }[];
    expect(rows.map((row) => row.name).sort()).toEqual(
      [
        'rho__answer_approval',
        'rho__cancel_session',
        'rho__list_sessions',
        'rho__policy_check',
        'rho__run_task',
        'rho__send_directive',
        'rho__session_output',
        'rho__session_status',
      ].sort(),
    );
    expect(rows.find((row) => row.name === 'rho__policy_check')).toMatchObject({ readOnlyHint: true });
    // readonly offers none of them: its mcp.read_only names none (a server's hint is never trusted alone).
    const readonly = await runRho(['mcp', 'tools', 'rho', '--json'], { env, cwd: s.work });
    expect(
      (JSON.parse(readonly.stdout) as { decision: string }[]).every((row) => row.decision === 'deny'),
      readonly.stdout,
    ).toBe(true);
    const checked = await runRho(
      ['mcp', 'call', 'rho', 'policy_check', '--profile', 'developer', '--json', '--args', '{"shell":"rm -rf /"}'],
      { env, cwd: s.work },
    );
    expect(checked.code, checked.stderr).toBe(0);
    const raw = JSON.parse(checked.stdout) as { structuredContent: Record<string, unknown> };
    expect(raw.structuredContent).toMatchObject({ kind: 'shell', profile: 'readonly', input: 'rm -rf /' });
    expect(model.requests).toHaveLength(0);
  }, 120_000);
});
