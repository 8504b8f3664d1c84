import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage } from '@rho/core';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

// Issue 32: the sqlite tool ran a recursive CTE for more than 150 s past its 30 s statement
// timeout (SQLite's step cannot be interrupted from the thread that runs it). Through the real
// CLI: a statement that never leaves one step is stopped at the alias's statement_timeout, the
// model is told which limit it hit, and the run ends. On the old code rho never ends (the test
// fails at its timeout and kills it).

let server: LoopbackServer | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  child = undefined;
  await server?.close();
  server = undefined;
});

describe('the sqlite statement timeout through the real CLI', () => {
  it('stops an endless recursive CTE at statement_timeout and tells the model the limit', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-cli-sqlite-timeout-')));
    const work = join(root, 'work');
    mkdirSync(work);
    // An empty database file is a valid SQLite database.
    writeFileSync(join(work, 'empty.sqlite'), '');
    writeFileSync(
      join(work, 'databases.yaml'),
      'databases:\n  scratch:\n    type: sqlite\n    path: ./empty.sqlite\n    statement_timeout: 1\n',
    );
    const sql = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';
    server = await startLoopbackServer({
      steps: [
        {
          type: 'response',
          toolCalls: [{ name: 'sqlite', arguments: JSON.stringify({ database: 'scratch', operation: 'query', sql }) }],
        },
        { type: 'response', text: 'Done.' },
      ],
    });
    const outcome = await runRho(
      ['--base-url', server.url, '--profile', 'readonly', '-y', '--db-config', 'databases.yaml', 'Count forever.'],
      {
        env: { RHO_HOME: join(root, 'rho-home') },
        cwd: work,
        onSpawn: (spawned) => {
          child = spawned;
        },
      },
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    const last = server.requests.at(-1)!.body as { messages: ChatMessage[] };
    const results = last.messages
      .filter((message) => message.role === 'tool')
      .map((message) => String(message.content));
    expect(results).toHaveLength(1);
    expect(results[0]).toMatch(/ran longer than the 1 s statement timeout/);
  });
});
