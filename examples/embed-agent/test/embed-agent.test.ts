import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startLoopbackServer } from '@rho/core/testing';
import { describe, expect, it } from 'vitest';
import { createShopDatabase, orderCount } from './support/shop-database.js';

const main = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'main.js');

interface SentRequest {
  messages: { role: string; content: string | null }[];
  tools?: { function: { name: string } }[];
}

/** A project with a SQLite database (made before rho opens it, as a user's would be) and a Makefile. */
async function project(): Promise<string> {
  const directory = mkdtempSync(join(tmpdir(), 'rho-embed-agent-'));
  await createShopDatabase(directory);
  writeFileSync(join(directory, 'Makefile'), 'clean:\n\trm -rf dist\n');
  return directory;
}

function run(
  args: string[],
  options: { cwd: string; baseURL: string; input: string },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [main, ...args], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH, OPENAI_BASE_URL: options.baseURL },
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
    child.stdin.end(options.input);
  });
}

describe('an app that installs @rho/agent alone', () => {
  it('builds an Agent from the developer profile with a SQLite database and runs db and file tools through approval', async () => {
    const workingDir = await project();
    const server = await startLoopbackServer({
      steps: [
        {
          type: 'response',
          toolCalls: [
            {
              name: 'sqlite',
              arguments: JSON.stringify({ operation: 'query', sql: 'SELECT customer, total FROM orders ORDER BY id' }),
            },
          ],
        },
        {
          type: 'response',
          toolCalls: [
            {
              name: 'sqlite',
              arguments: JSON.stringify({ operation: 'query', sql: 'DELETE FROM orders WHERE id = 1' }),
            },
          ],
        },
        {
          type: 'response',
          toolCalls: [
            {
              name: 'edit',
              arguments: JSON.stringify({
                path: 'Makefile',
                old_string: 'rm -rf dist',
                new_string: 'rm -rf dist build',
              }),
            },
          ],
        },
        {
          type: 'response',
          toolCalls: [
            { name: 'write', arguments: JSON.stringify({ path: 'report.md', content: '2 orders, 42.5 in total\n' }) },
          ],
        },
        { type: 'response', text: 'Two orders, 42.5 in total; report.md written.' },
      ],
    });
    try {
      const output = await run(
        ['--db', 'shop=shop.sqlite', 'Summarise the orders into report.md and make clean remove build too.'],
        { cwd: workingDir, baseURL: server.url, input: 'y\ny\n' },
      );
      expect(output.code, output.stderr).toBe(0);
      expect(output.stdout.trim()).toBe('Two orders, 42.5 in total; report.md written.');
      // The profile asked for exactly the two calls with a dangerous pattern, and said why.
      const prompts = output.stderr.split('\n').filter((line) => line.startsWith('approve '));
      expect(prompts).toHaveLength(2);
      expect(prompts[0]).toContain(
        'approve sqlite {"operation":"query","sql":"DELETE FROM orders WHERE id = 1"} (the arguments contain the dangerous pattern "DELETE FROM" (approval.dangerous_patterns of profile developer))? [y/N] approved',
      );
      expect(prompts[1]).toContain('approve edit ');
      expect(prompts[1]).toContain('dangerous pattern "rm -rf"');
      expect(output.stderr).not.toMatch(/warning:/);

      const sent = server.requests.map((request) => request.body as SentRequest);
      expect(sent[0]!.tools!.map((tool) => tool.function.name).sort()).toEqual([
        'bash',
        'delegate',
        'edit',
        'glob',
        'grep',
        'list',
        'read',
        'read_excel',
        'sqlite',
        'write',
      ]);
      const toolResults = sent.slice(1).map((request) => String(request.messages.at(-1)!.content));
      expect(toolResults[0]).toContain('grace');
      // Approved by the person, refused by the database layer: developer's databases are read-only.
      expect(toolResults[1]).toMatch(/read-only|not allowed|refused/i);
      expect(await orderCount(workingDir)).toBe(2);
      expect(readFileSync(join(workingDir, 'Makefile'), 'utf8')).toBe('clean:\n\trm -rf dist build\n');
      expect(readFileSync(join(workingDir, 'report.md'), 'utf8')).toBe('2 orders, 42.5 in total\n');
    } finally {
      await server.close();
    }
  });

  it('does not run a call the person rejects', async () => {
    const workingDir = await project();
    const server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command: 'rm -rf Makefile' }) }] },
      ],
    });
    try {
      const output = await run(['Remove the Makefile.'], { cwd: workingDir, baseURL: server.url, input: 'n\n' });
      // The only call was rejected: the run did not do its task, and its status says so.
      expect(output.code, output.stderr).toBe(1);
      expect(output.stderr).toContain('refused');
      expect(output.stderr).toContain('approve bash {"command":"rm -rf Makefile"}');
      expect(output.stderr).toContain('rejected');
      expect(readFileSync(join(workingDir, 'Makefile'), 'utf8')).toBe('clean:\n\trm -rf dist\n');
      // A rejection ends the turn: the run waits for the person's next instruction instead of asking the model again.
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
