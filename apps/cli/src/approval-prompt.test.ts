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
    expect(questions[0]).toMatch(/Allow\? yes \/ No \/ c: always this exact call \/ a: always bash \(Enter = no\)/);
    expect(memory.tools.has('bash')).toBe(true);
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
