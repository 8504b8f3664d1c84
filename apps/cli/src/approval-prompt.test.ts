import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createApprovalMemory, createTerminalApprover } from './approval-prompt.js';
import type { Terminal } from './terminal.js';

function terminal(): { terminal: Terminal; text: () => string } {
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return { terminal: { stdout: new PassThrough(), stderr, color: false }, text: () => text };
}

describe('createTerminalApprover', () => {
  it('remembers "always this exact call" for the same arguments only, and "always this tool" for every call', async () => {
    const answers = ['c', 'n', 'a'];
    const questions: string[] = [];
    const { terminal: term, text } = terminal();
    const memory = createApprovalMemory();
    const approve = createTerminalApprover(term, {
      memory,
      ask: async (question) => (questions.push(question), answers.shift() ?? null),
    });
    const request = (command: string) => ({
      toolName: 'bash',
      toolCallId: 'c',
      arguments: { command },
      sessionId: 's',
      reason: 'bash is a dangerous tool',
    });
    expect(await approve(request('ls'))).toBe(true);
    // The same call again: not asked.
    expect(await approve(request('ls'))).toBe(true);
    expect(questions).toHaveLength(1);
    // Another command: asked, refused.
    expect(await approve(request('rm x'))).toBe(false);
    expect(text()).toContain('risk: bash is a dangerous tool');
    // Always this tool: asked once more, then never.
    expect(await approve(request('pwd'))).toBe(true);
    expect(await approve(request('anything'))).toBe(true);
    expect(questions).toHaveLength(3);
    expect(questions[0]).toMatch(
      /Allow\? yes \/ No \/ c: always this exact call \/ a: always bash \(except dangerous patterns\) \(Enter = no\)/,
    );
    expect(memory.tools.has('bash')).toBe(true);
  });

  it('"always this tool" never approves a dangerous call of it, and the prompt says so', async () => {
    const answers = ['a', 'a', 'n', 'c'];
    const questions: string[] = [];
    const { terminal: term } = terminal();
    const approve = createTerminalApprover(term, {
      ask: async (question) => (questions.push(question), answers.shift() ?? null),
    });
    const call = (command: string, dangerous?: string) => ({
      toolName: 'bash',
      toolCallId: 'c',
      arguments: { command },
      sessionId: 's',
      ...(dangerous === undefined ? {} : { dangerous }),
    });
    expect(await approve(call('ls'))).toBe(true);
    expect(await approve(call('pwd'))).toBe(true);
    expect(questions).toHaveLength(1);
    // A dangerous call asks although the tool was approved "always", and says what "a" covers.
    expect(await approve(call('rm -rf build', 'rm -rf'))).toBe(true);
    expect(questions[1]).toMatch(/a: always bash except dangerous patterns: this call and the next "rm -rf" still ask/);
    expect(await approve(call('rm -rf dist', 'rm -rf'))).toBe(false);
    // "Always this exact call" covers that call, dangerous or not, and nothing else.
    expect(await approve(call('rm -rf tmp', 'rm -rf'))).toBe(true);
    expect(await approve(call('rm -rf tmp', 'rm -rf'))).toBe(true);
    expect(questions).toHaveLength(4);
  });

  it('refuses on Enter and at the end of input', async () => {
    const { terminal: term } = terminal();
    const request = {
      toolName: 'write',
      toolCallId: 'c',
      arguments: { path: 'x.txt', content: 'hi\n' },
      sessionId: 's',
    };
    expect(await createTerminalApprover(term, { ask: async () => '' })(request)).toBe(false);
    expect(await createTerminalApprover(term, { ask: async () => null })(request)).toBe(false);
  });
});
