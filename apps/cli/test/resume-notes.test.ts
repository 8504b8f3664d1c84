import { appendFileSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import { describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

// Issue 33: `--resume` skipped unreadable trace lines silently with --json (the notes went to a
// human-only path); export and the human resume said so. Now both say it, --json as warnings.
describe('a resumed trace with an unreadable line', () => {
  it('is noted on stderr, and as a JSON warning with --json', async () => {
    const model = await startLoopbackServer({
      steps: [
        { type: 'response', text: 'first' },
        { type: 'response', text: 'second' },
        { type: 'response', text: 'third' },
      ],
    });
    try {
      const home = mkdtempSync(join(tmpdir(), 'rho-resume-notes-'));
      const env = { RHO_HOME: home, OPENAI_API_KEY: 'k' };
      expect((await runRho(['--base-url', model.url, 'hello'], { env })).code).toBe(0);
      const [id] = readdirSync(join(home, 'sessions'));
      // A line no reader can use, between two whole records (not the torn end of a crash).
      const trace = join(home, 'sessions', id!, 'trace.jsonl');
      appendFileSync(trace, `{"type": "status", "status": "running", "cut off here\n`);
      appendFileSync(
        trace,
        `${JSON.stringify({ type: 'status', status: 'completed', ts: new Date().toISOString() })}\n`,
      );

      const human = await runRho(['--base-url', model.url, '--resume', id!, 'again'], { env });
      expect(human.code).toBe(0);
      expect(human.stderr).toMatch(/Note: 1 unreadable trace line\(s\) were skipped \(lines \d+\)/);

      const json = await runRho(['--json', '--base-url', model.url, '--resume', id!, 'once more'], { env });
      expect(json.code).toBe(0);
      const warnings = json.stderr
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { type: string; message: string });
      expect(warnings).toContainEqual(
        expect.objectContaining({
          type: 'warning',
          message: expect.stringMatching(/unreadable trace line\(s\) were skipped/),
        }),
      );
    } finally {
      await model.close();
    }
  });
});
