// Helpers for tests that need a PostgreSQL server (the fleet's, the queue's, the CLI's): the
// shared server of a test machine, and a probe that skips locally but fails under CI when it does
// not answer; a fresh schema per test and its removal. postgres.js loads only when a probe or a
// drop runs, so importing this entry stays cheap.
import { randomBytes } from 'node:crypto';
import type { FleetConfig } from '../fleet-config.js';

/** The shared PostgreSQL of a test machine: 127.0.0.1:5432, user postgres, trust authentication. */
export const SHARED_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** Whether the server is required (CI=true or RHO_REQUIRE_DB=1): then a missing one is a failure, not a skip. */
export const postgresRequired = process.env.CI === 'true' || process.env.RHO_REQUIRE_DB === '1';

/**
 * Whether PostgreSQL answers at `url`, with the reason when it does not (for a skip message).
 * @throws Error when it does not answer and {@link postgresRequired} is set.
 */
export async function probePostgres(url = SHARED_POSTGRES_URL): Promise<{ available: boolean; reason: string }> {
  // postgres.js is CommonJS typed as `export =`: its factory is the module's default export.
  const { default: postgres } = (await import('postgres')) as unknown as { default: typeof import('postgres') };
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => undefined });
  try {
    await sql`select 1`;
    return { available: true, reason: '' };
  } catch (error) {
    if (postgresRequired)
      throw new Error(`PostgreSQL at ${url} is required (CI=true) but does not answer: ${String(error)}`, {
        cause: error,
      });
    return { available: false, reason: `PostgreSQL at ${url} does not answer: ${(error as Error).message}` };
  } finally {
    await sql.end({ timeout: 0 }).catch(() => undefined);
  }
}

/**
 * A fleet configuration in a fresh schema with a random name (not created yet: the fleet's
 * `migrate()` creates it), for a test that works in a schema of its own; drop it after with
 * {@link dropTestSchema}.
 */
export function freshFleetConfig(url = SHARED_POSTGRES_URL, overrides: Partial<FleetConfig> = {}): FleetConfig {
  return {
    url,
    schema: testSchemaName('rho_fleet_test'),
    heartbeatIntervalMs: 5_000,
    deadAfterMs: 30_000,
    source: 'flag',
    ...overrides,
  };
}

/** A schema name that no other test uses: `prefix` and ten random hex digits. */
export function testSchemaName(prefix = 'rho_test'): string {
  if (!/^[a-z_][a-z0-9_]{0,40}$/.test(prefix)) throw new Error(`Not a schema name prefix: ${prefix}`);
  return `${prefix}_${randomBytes(5).toString('hex')}`;
}

/** Drops a test's schema (a fleet's or a queue's) and everything in it; nothing when it does not exist. */
export async function dropTestSchema(schema: string, url = SHARED_POSTGRES_URL): Promise<void> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`Not a schema name: ${schema}`);
  const { default: postgres } = (await import('postgres')) as unknown as { default: typeof import('postgres') };
  const sql = postgres(url, { max: 1, connect_timeout: 5, onnotice: () => undefined });
  try {
    await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  } finally {
    await sql.end({ timeout: 1 }).catch(() => undefined);
  }
}
