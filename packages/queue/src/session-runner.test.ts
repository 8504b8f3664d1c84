import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCliSessionRunner } from './session-runner.js';

describe('createCliSessionRunner', () => {
  it("gives the session the task's labels in RHO_TASK_LABELS, and none of the worker's own", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rho-runner-'));
    const out = join(dir, 'labels');
    // A stand-in for rho that writes down what it was given.
    const script = join(dir, 'rho.cjs');
    writeFileSync(
      script,
      `require('fs').writeFileSync(${JSON.stringify(out)}, process.env.RHO_TASK_LABELS ?? 'unset');`,
    );
    const runner = createCliSessionRunner({
      command: [process.execPath, script],
      env: { ...process.env, RHO_TASK_LABELS: 'from-the-worker' },
    });
    const run = (labels?: string[]) =>
      runner(
        { id: 't1', attempt: 1, spec: { prompt: 'p', ...(labels === undefined ? {} : { labels }) } },
        {
          onSession: () => undefined,
        },
      ).result.then(() => readFileSync(out, 'utf8'));
    expect(await run(['db', 'nightly'])).toBe('db,nightly');
    expect(await run()).toBe('');
  });
});
