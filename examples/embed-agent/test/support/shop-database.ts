import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLocalBackend } from '@rho/core';
import { createToolset } from '@rho/agent';

/**
 * Runs statements on a SQLite file through rho's own `sqlite` tool (under `unrestricted`, which
 * allows mutations), so tests use the engine rho picks on this Node version (better-sqlite3 before
 * Node 24, node:sqlite from 24) instead of opening the file with a driver of their own.
 */
async function runSql(
  directory: string,
  path: string,
  statements: readonly string[],
  profile: 'unrestricted' | 'readonly',
): Promise<string[]> {
  const toolset = await createToolset({
    profile,
    workingDir: directory,
    delegate: false,
    databases: [{ alias: 'shop', type: 'sqlite', path, statementTimeoutSeconds: 30 }],
  });
  const sqlite = toolset.tools.find((tool) => tool.name === 'sqlite');
  if (sqlite === undefined) throw new Error('no sqlite tool');
  const outputs: string[] = [];
  try {
    for (const sql of statements) {
      const result = await sqlite.handle(
        { callId: 'fixture', toolName: 'sqlite', arguments: { operation: 'query', sql } },
        {
          signal: new AbortController().signal,
          sessionId: 'fixture',
          workingDir: directory,
          backend: createLocalBackend(),
        },
      );
      if (!result.success) throw new Error(`${sql}: ${result.content}`);
      outputs.push(result.content);
    }
  } finally {
    await toolset.close();
  }
  return outputs;
}

/** `shop.sqlite` in the directory with an `orders` table of two rows, as a user's database would exist before rho opens it. */
export async function createShopDatabase(directory: string): Promise<string> {
  const path = join(directory, 'shop.sqlite');
  // An empty file is an empty SQLite database; rho opens database files but never creates them.
  writeFileSync(path, '');
  await runSql(
    directory,
    path,
    [
      'CREATE TABLE orders (id INTEGER PRIMARY KEY, customer TEXT, total REAL)',
      "INSERT INTO orders (customer, total) VALUES ('ada', 12.5), ('grace', 30)",
    ],
    'unrestricted',
  );
  return path;
}

/** How many rows `orders` has now, read through a read-only session. */
export async function orderCount(directory: string): Promise<number> {
  const [output] = await runSql(
    directory,
    join(directory, 'shop.sqlite'),
    ["SELECT 'rows=' || count(*) FROM orders"],
    'readonly',
  );
  const match = /rows=(\d+)/.exec(output ?? '');
  if (match === null) throw new Error(`cannot read the row count from: ${output}`);
  return Number(match[1]);
}
