import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Agent } from '../src/agent.js';
import { createScriptedModelClient } from '../src/testing/scripted-model-client.js';
import type { ScriptedStep } from '../src/testing/scripted-model-client.js';
import { defineTool } from '../src/tool.js';

const WRITERS = 4;
const PER_WRITER = 250;

// Appends directives the way the monitor does: one whole line per write(2), O_APPEND.
const writerScript = `
const { appendFileSync } = require('node:fs');
const [path, writer, count] = process.argv.slice(1);
for (let index = 0; index < Number(count); index += 1) {
  appendFileSync(path, JSON.stringify({ text: 'w' + writer + '-' + index }) + '\\n');
  if (index % 10 === 0) { const until = Date.now() + 1; while (Date.now() < until) {} }
}
`;

describe('directives', () => {
  it(
    `delivers each of ${WRITERS * PER_WRITER} directives from ${WRITERS} processes exactly once while the agent runs`,
    { timeout: 120_000 },
    async () => {
      const directory = mkdtempSync(join(tmpdir(), 'rho-directives-'));
      const path = join(directory, 'directives.jsonl');
      let writersDone = false;
      const tick = defineTool({
        name: 'tick',
        description: 'Waits a moment.',
        parameters: { type: 'object', properties: {} },
        async handle() {
          // Pacing only, not a race: the agent keeps calling this until the writers are done.
          await new Promise((resolve) => setTimeout(resolve, 2));
          return { content: 'tick', success: true };
        },
      });
      // Keep calling the tool until the writers are done, then one more turn to take the rest.
      let finishing = 0;
      const step = (): ScriptedStep => {
        if (writersDone) finishing += 1;
        return finishing >= 2 ? { text: 'done' } : { toolCalls: [{ name: 'tick', arguments: {} }] };
      };
      const client = createScriptedModelClient({ steps: Array.from({ length: 100_000 }, () => step) });
      const session = new Agent({ client, tools: [tick] }).createSession({ directory });
      const running = session.run('work until told');
      const writers = Array.from(
        { length: WRITERS },
        (_, writer) =>
          new Promise<void>((resolve, reject) => {
            const child = spawn(process.execPath, ['-e', writerScript, path, String(writer), String(PER_WRITER)], {
              stdio: 'inherit',
            });
            child.on('error', reject);
            child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`writer exited ${code}`))));
          }),
      );
      await Promise.all(writers);
      writersDone = true;
      const result = await running;
      expect(result.status).toBe('completed');

      const delivered = session.state.messages
        .filter((message) => message.role === 'user' && (message.content ?? '').startsWith('[Operator directive] '))
        .map((message) => (message.content ?? '').slice('[Operator directive] '.length));
      expect(delivered).toHaveLength(WRITERS * PER_WRITER);
      expect(new Set(delivered).size).toBe(WRITERS * PER_WRITER);
      // Per writer, in the order written.
      for (let writer = 0; writer < WRITERS; writer += 1) {
        const mine = delivered.filter((text) => text.startsWith(`w${writer}-`));
        expect(mine).toEqual(Array.from({ length: PER_WRITER }, (_, index) => `w${writer}-${index}`));
      }
      const records = readFileSync(join(directory, 'trace.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string });
      expect(records.filter((record) => record.type === 'directive')).toHaveLength(WRITERS * PER_WRITER);
      // Delivered over several turns, i.e. while the agent was running and reading.
      expect(client.requests.length).toBeGreaterThan(2);
    },
  );
});
