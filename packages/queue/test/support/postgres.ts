// Real PostgreSQL for the queue's tests: each test file gets its own schema (random suffix), dropped
// after. Locally a suite skips when the server does not answer; under CI=true that is a failure.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The shared server the tests use. */
export const POSTGRES_URL = process.env.RHO_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Whether CI requires the server (then a missing one fails the run). */
export const serverRequired = process.env.CI === 'true' || process.env.RHO_REQUIRE_DB === '1';

/** Whether the server answers; throws when it does not and CI requires it. */
export async function postgresAvailable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch (error) {
    if (serverRequired)
      throw new Error(`PostgreSQL at ${POSTGRES_URL} is required (CI=true): ${String(error)}`, { cause: error });
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A fresh schema name for one test file. */
export function testSchema(prefix = 'rho_queue_test'): string {
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

/** Drops a test schema and everything in it. */
export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  try {
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Polls `check` until it returns a value other than undefined/false (a condition, not a sleep). */
export async function waitFor<T>(
  check: () => Promise<T | undefined | false>,
  what: string,
  timeoutMs = 60_000,
): Promise<T> {
  const started = Date.now();
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
