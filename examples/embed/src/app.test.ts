import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLoopbackServer } from '@rho/core/testing';
import { describe, expect, it } from 'vitest';

const main = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');

describe('the embedding app', () => {
  it('runs a session with the third-party tool against an OpenAI-compatible server', async () => {
    const workingDir = mkdtempSync(join(tmpdir(), 'rho-embed-'));
    writeFileSync(join(workingDir, 'README.md'), 'one two three\nfour\n');
    const server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'word_count', arguments: '{"path": "README.md"}' }] },
        { type: 'response', text: 'README.md has 4 words.' },
      ],
    });
    try {
      const output = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [main, 'How many words are in README.md?'], {
          cwd: workingDir,
          env: { PATH: process.env.PATH, OPENAI_BASE_URL: server.url },
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
        });
        child.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        child.on('error', reject);
        child.on('close', (code) => resolve({ code, stdout, stderr }));
      });
      expect(output.stderr).toBe('');
      expect(output.code).toBe(0);
      expect(output.stdout.trim()).toBe('README.md has 4 words.');
      const second = server.requests[1]!.body as { messages: { role: string; content: string }[] };
      expect(second.messages.at(-1)).toMatchObject({
        role: 'tool',
        content: `2 lines, 4 words, 19 bytes: ${join(workingDir, 'README.md')}`,
      });
    } finally {
      await server.close();
    }
  });
});
