import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionWriteError } from '@rho/core';
import { afterEach, describe, expect, it } from 'vitest';
import { createSqlResultsFile } from '../src/sql/sql-results-file.js';
import type { SqlQuestionResult, SqlRunHeader } from '../src/sql/sql-results-file.js';

// `rho eval sql` results on a disk that fills up: each result is one whole line or none, and the
// failure is a SessionWriteError naming the file (it used to leave a torn line that the next
// result was appended to, and then throw a bare ENOSPC).

const mounts: string[] = [];
afterEach(() => {
  for (const mountpoint of mounts.splice(0)) {
    spawnSync('umount', [mountpoint]);
    rmSync(mountpoint, { recursive: true, force: true });
  }
});

function smallTmpfs(size: string): string | undefined {
  const mountpoint = mkdtempSync(join(tmpdir(), 'rho-eval-tmpfs-'));
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', mountpoint]).status !== 0) {
    rmSync(mountpoint, { recursive: true, force: true });
    return undefined;
  }
  mounts.push(mountpoint);
  return mountpoint;
}

describe('sql results file on a full disk', () => {
  it('keeps whole lines only and fails with the file named', (context) => {
    const mountpoint = smallTmpfs('64k');
    if (mountpoint === undefined) return context.skip('cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)');
    const path = join(mountpoint, 'results.jsonl');
    const writer = createSqlResultsFile(path, { type: 'header', note: 'x' } as unknown as SqlRunHeader);
    let failure: unknown;
    try {
      // 30 KB each: the third cannot fit whole in 64 KiB.
      for (let index = 0; index < 10; index += 1)
        writer.append({ question_id: `q${index}`, answer: 'a'.repeat(30_000) } as unknown as SqlQuestionResult);
    } catch (error) {
      failure = error;
    } finally {
      writer.close();
    }
    expect(SessionWriteError.isInstance(failure)).toBe(true);
    expect((failure as Error).message).toContain(`Cannot write ${path}: ENOSPC (no space left on the device).`);
    const text = readFileSync(path, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.trimEnd().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as { question_id?: string }).question_id)).toEqual([
      undefined,
      'q0',
      'q1',
    ]);
  });
});
