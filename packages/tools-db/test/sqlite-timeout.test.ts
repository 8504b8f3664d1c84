import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@rho/core';
import { closeDbTools, createDbTools } from '../src/db-tools.js';
import type { DatabaseConfig } from '../src/database-config.js';
import { copySqliteChinook } from './support/servers.js';
import { call, profile, toolNamed } from './support/tool-call.js';

// Issue 32: a recursive CTE ran for more than 150 s past the sqlite tool's 30 s statement timeout,
// because SQLite's step cannot be interrupted from the thread that runs it. These statements
// never end (one step of `count(*)` never returns): on the old code each test hangs until its
// vitest timeout; now the statement is stopped at its limit and the next call works.
const ENDLESS = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';

let directory: string;
let config: DatabaseConfig;
const opened: Tool[][] = [];

function sqliteTool(timeoutSeconds: number, profileName: 'readonly' | 'unrestricted' = 'readonly'): Tool {
  const list = createDbTools({
    profile: profile(profileName),
    databases: [{ ...config, statementTimeoutSeconds: timeoutSeconds }],
    workingDir: directory,
  });
  opened.push(list);
  return toolNamed(list, 'sqlite');
}

beforeAll(async () => {
  ({ directory, config } = await copySqliteChinook());
});

afterAll(async () => {
  for (const list of opened) await closeDbTools(list);
});

describe('the sqlite statement timeout', () => {
  it('stops a statement that never leaves one step, names the limit, and the next call works', async () => {
    const tool = sqliteTool(1);
    const stopped = await call(tool, { operation: 'query', sql: ENDLESS });
    expect(stopped.success).toBe(false);
    expect(stopped.content).toMatch(/ran longer than the 1 s statement timeout/);
    const next = await call(tool, { operation: 'query', sql: 'SELECT count(*) AS n FROM Artist' });
    expect(next.success, next.content).toBe(true);
    expect(next.content).toMatch(/^275$/m);
  });

  it('stops an endless export and leaves no file', async () => {
    const tool = sqliteTool(1, 'unrestricted');
    const result = await call(tool, { operation: 'export_query', sql: ENDLESS, export_path: 'endless.csv' }, directory);
    expect(result.success).toBe(false);
    expect(result.content).toMatch(/statement timeout/);
    expect(existsSync(join(directory, 'endless.csv'))).toBe(false);
  });

  it('cancels a running statement when the call is aborted', async () => {
    const tool = sqliteTool(600);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 500);
    const result = await call(tool, { operation: 'query', sql: ENDLESS }, directory, controller.signal);
    expect(result.success).toBe(false);
    expect(result.content).toMatch(/cancelled/);
    const next = await call(tool, { operation: 'query', sql: 'SELECT 1 AS one' });
    expect(next.success, next.content).toBe(true);
  });
});
