import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from '@rho/core';
import { createScriptedModelClient } from '@rho/core/testing';
import { describe, expect, it } from 'vitest';
import { wordCountTool } from './word-count-tool.js';

describe('word_count', () => {
  it('is called by an agent and counts a real file relative to the working directory', async () => {
    const workingDir = mkdtempSync(join(tmpdir(), 'rho-wc-'));
    writeFileSync(join(workingDir, 'poem.txt'), 'roses are red\nviolets are blue\n');
    const client = createScriptedModelClient({
      steps: [{ toolCalls: [{ name: 'word_count', arguments: { path: 'poem.txt' } }] }, { text: '2 lines.' }],
    });
    const session = new Agent({ tools: [wordCountTool], client, workingDir }).createSession();
    const result = await session.run('count poem.txt');
    expect(result.status).toBe('completed');
    expect(session.state.messages[2]!.content).toBe(`2 lines, 6 words, 31 bytes: ${join(workingDir, 'poem.txt')}`);
    client.assertDone();
  });

  it('refuses directories with a message the model can act on', async () => {
    const workingDir = mkdtempSync(join(tmpdir(), 'rho-wc-'));
    const client = createScriptedModelClient({
      steps: [{ toolCalls: [{ name: 'word_count', arguments: { path: '.' } }] }, { text: 'ok' }],
    });
    const session = new Agent({ tools: [wordCountTool], client, workingDir }).createSession();
    await session.run('count');
    expect(session.state.messages[2]!.content).toBe(`Not a file: ${workingDir}`);
  });

  it('shows the model a stable schema', () => {
    expect(wordCountTool.parameters).toMatchInlineSnapshot(`
      {
        "properties": {
          "path": {
            "description": "The file to count.",
            "type": "string",
          },
        },
        "required": [
          "path",
        ],
        "type": "object",
      }
    `);
  });
});
