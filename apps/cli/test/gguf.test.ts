import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateAtifTrajectory } from '@rho/core/atif';
import { describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

// `rho --model gguf:PATH` with the vendored 260K-parameter model: the CLI loads @rho/model-gguf
// (llama.cpp in process) only for this, the grammar forces a tool call, the answer streams to
// stdout, and the session's trace exports as ATIF. The model's words are not judged.
const model = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'packages',
  'model-gguf',
  'fixtures',
  'stories260K.gguf',
);

describe('rho --model gguf:PATH (built binary, real inference)', () => {
  it('runs a task with a forced tool call, streams the answer, and exports the trace', async () => {
    const home = mkdtempSync(join(tmpdir(), 'rho-gguf-home-'));
    const work = mkdtempSync(join(tmpdir(), 'rho-gguf-work-'));
    writeFileSync(join(work, 'story.txt'), 'Lily had a red ball.\n');
    const outcome = await runRho(['--model', `gguf:${model}`, 'Read story.txt, then tell the story.'], {
      env: { RHO_HOME: home, RHO_GGUF_TOOL_CHOICE: 'required' },
      cwd: work,
    });
    // The tiny model may stop at its 1024-token answer limit: exit 1 (truncated) or 0.
    expect([0, 1], outcome.stderr).toContain(outcome.code);
    expect(outcome.stdout.trim()).not.toBe('');
    const [id] = readdirSync(join(home, 'sessions'));
    const records = readFileSync(join(home, 'sessions', id!, 'trace.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; model?: string; role?: string; tool_calls?: unknown[] });
    expect(records.filter((record) => record.type === 'llm_end').map((record) => record.model)).toEqual([
      'gguf:stories260K.gguf',
      'gguf:stories260K.gguf',
    ]);
    expect(records.find((record) => record.type === 'message' && record.role === 'assistant')?.tool_calls).toHaveLength(
      1,
    );
    // The call either ran or was blocked by the readonly profile: either way it got one result.
    expect(records.filter((record) => record.type === 'message' && record.role === 'tool')).toHaveLength(1);
    const exported = await runRho(['export', id!], { env: { RHO_HOME: home } });
    expect(exported.code, exported.stderr).toBe(0);
    const trajectory = JSON.parse(exported.stdout) as unknown;
    expect(validateAtifTrajectory(trajectory)).toEqual([]);
    expect((trajectory as { agent: { model_name: string } }).agent.model_name).toBe(`gguf:${model}`);
  });

  it('says what to pass when the GGUF file does not exist', async () => {
    const home = mkdtempSync(join(tmpdir(), 'rho-gguf-home-'));
    const outcome = await runRho(['--model', 'gguf:missing.gguf', 'hi'], { env: { RHO_HOME: home } });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('GGUF model not found');
    expect(outcome.stderr).toContain('missing.gguf');
  });
});
