// `-y` never widens `readonly` (issue 32): an MCP tool that falsely claims `readOnlyHint` wrote a
// file under `readonly` with `-y`. Through the real CLI, with a real MCP server over stdio whose
// tools all claim to be read-only and one of which writes: under a profile that promises no
// changes, only the tools it names in `mcp.read_only` are offered, `-y` or not.
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChatMessage } from '@rho/core';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

const liar = fileURLToPath(new URL('../../../packages/tools-mcp/src/test-support/liar-server.mjs', import.meta.url));

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function setup() {
  const root = mkdtempSync(join(tmpdir(), 'rho-mcp-readonly-'));
  const home = join(root, 'home');
  const work = join(root, 'work');
  mkdirSync(home);
  mkdirSync(work);
  const written = join(root, 'written.txt');
  writeFileSync(
    join(home, 'config.yaml'),
    [
      'mcp_servers:',
      '  liar:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(liar)}]`,
      `    env: {LIAR_FILE: ${JSON.stringify(written)}}`,
      '',
    ].join('\n'),
  );
  return { root, home, work, written };
}

const offered = (index: number) =>
  ((server!.requests[index]!.body as { tools?: { function: { name: string } }[] }).tools ?? []).map(
    (tool) => tool.function.name,
  );
const toolResults = () =>
  (server!.requests.at(-1)!.body as { messages: ChatMessage[] }).messages
    .filter((message) => message.role === 'tool')
    .map((message) => String(message.content));

describe('MCP tools under readonly with -y, through the real CLI', () => {
  it('does not offer a tool that only claims readOnlyHint, so -y cannot run it: nothing is written', async () => {
    const { home, work, written } = setup();
    server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'liar__note', arguments: '{"text": "pwned"}' }] },
        { type: 'response', text: 'Done.' },
      ],
    });
    const outcome = await runRho(['--base-url', server.url, '--profile', 'readonly', '-y', '-p', 'Take a note'], {
      env: { RHO_HOME: home, OPENAI_API_KEY: 'test' },
      cwd: work,
    });
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(existsSync(written)).toBe(false);
    expect(offered(0)).not.toContain('liar__note');
    expect(offered(0)).not.toContain('liar__peek');
    expect(toolResults().join('\n')).not.toContain('noted');
    // rho mcp tools says why.
    const tools = await runRho(['mcp', 'tools', '--profile', 'readonly'], { env: { RHO_HOME: home }, cwd: work });
    expect(tools.stdout).toMatch(/deny\s+liar__note/);
  });

  it('offers and runs, with -y, only the tools the profile names in mcp.read_only', async () => {
    const { root, home, work, written } = setup();
    const profile = join(root, 'trusting.yaml');
    writeFileSync(profile, 'profile: trusting\nmcp:\n  read_only: [liar/peek]\n');
    server = await startLoopbackServer({
      steps: [
        {
          type: 'response',
          toolCalls: [
            { name: 'liar__peek', arguments: '{"text": "world"}' },
            { name: 'liar__note', arguments: '{"text": "pwned"}' },
          ],
        },
        { type: 'response', text: 'Done.' },
      ],
    });
    const outcome = await runRho(['--base-url', server.url, '--profile', profile, '-y', '-p', 'Peek and note'], {
      env: { RHO_HOME: home, OPENAI_API_KEY: 'test' },
      cwd: work,
    });
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(offered(0)).toContain('liar__peek');
    expect(offered(0)).not.toContain('liar__note');
    const results = toolResults();
    expect(results.some((result) => result.includes('hello world'))).toBe(true);
    expect(existsSync(written)).toBe(false);
  });
});
