import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import { describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

const rho = (args: string[], home: string) => runRho(args, { cwd: home, env: { RHO_HOME: home } });

describe('child sessions in the monitor', () => {
  it('ps lists a delegate child under its parent, and watch shows its events under the parent', async () => {
    const home = mkdtempSync(join(tmpdir(), 'rho-children-'));
    const server = await startLoopbackServer({
      steps: [
        { type: 'response', toolCalls: [{ name: 'delegate', arguments: '{"instruction": "Count the files."}' }] },
        { type: 'response', text: 'Child says: there are no files.' },
        { type: 'response', text: 'Parent done.' },
      ],
    });
    try {
      const run = await rho(['--base-url', server.url, '-y', 'Delegate the counting.'], home);
      expect(run.code).toBe(0);
      const ids = readdirSync(join(home, 'sessions'));
      expect(ids).toHaveLength(2);
      const metas = ids.map(
        (id) =>
          JSON.parse(readFileSync(join(home, 'sessions', id, 'meta.json'), 'utf8')) as {
            id: string;
            parent_id: string | null;
          },
      );
      const parent = metas.find((meta) => meta.parent_id === null)!;
      const child = metas.find((meta) => meta.parent_id === parent.id)!;

      const ps = await rho(['ps', '--json'], home);
      const listed = JSON.parse(ps.stdout) as { id: string; parent_id: string | null }[];
      expect(listed.find((entry) => entry.id === child.id)?.parent_id).toBe(parent.id);
      const table = await rho(['ps'], home);
      const lines = table.stdout.split('\n');
      const parentLine = lines.findIndex((line) => line.includes(parent.id));
      expect(lines[parentLine + 1]).toContain(child.id);

      const watch = await rho(['watch', parent.id], home);
      expect(watch.code).toBe(0);
      expect(watch.stdout).toMatch(
        new RegExp(`┆ ${child.id.slice(0, 8)} .*assistant: Child says: there are no files\\.`),
      );
      expect(watch.stdout).toMatch(/→ delegate\(instruction='Count the files\.'\)/);
      const json = await rho(['watch', parent.id, '--json'], home);
      const records = json.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; child_session_id?: string });
      expect(records.some((record) => record.child_session_id === child.id && record.type === 'run_end')).toBe(true);
      expect(
        records.filter((record) => record.child_session_id === undefined && record.type === 'run_end'),
      ).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
