// The shared PostgreSQL of the test machine (127.0.0.1:5432, user postgres, trust). Each test file
// works in its own schema with a random name and drops it afterwards. Locally a suite skips (with
// the reason) when the server does not answer; under CI=true a missing server fails the run.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import type { Sql } from 'postgres';
import type { FleetConfig } from '../../src/fleet-config.js';
import { probePostgres, postgresRequired, SHARED_POSTGRES_URL } from '../../src/testing/index.js';

export const SHARED_URL = SHARED_POSTGRES_URL;

/** Whether CI requires the server (then a missing one is a failure, not a skip). */
export const serverRequired = postgresRequired;

/** Whether PostgreSQL answers at `url`; throws under CI when it does not. */
export const probe = probePostgres;

const probed = await probe();
/** The probe of the shared server, made once per test file. */
export const sharedServer = probed;

/** A fleet configuration in a fresh random schema (not created yet: `migrate()` creates it). */
export function freshConfig(url = SHARED_URL, overrides: Partial<FleetConfig> = {}): FleetConfig {
  return {
    url,
    schema: `rho_fleet_test_${randomBytes(5).toString('hex')}`,
    heartbeatIntervalMs: 5_000,
    deadAfterMs: 30_000,
    source: 'flag',
    ...overrides,
  };
}

/** An admin connection (for setup, inspection and dropping the schema). */
export function admin(url = SHARED_URL): Sql {
  return postgres(url, { max: 2, connect_timeout: 5, onnotice: () => undefined });
}

/** Drops a test schema. */
export async function dropSchema(schema: string, url = SHARED_URL): Promise<void> {
  const sql = admin(url);
  try {
    await sql.unsafe(`drop schema if exists "${schema}" cascade`);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** Waits until `check` holds (polling), failing after `timeoutMs`. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `Timed out after ${timeoutMs} ms waiting for ${what}${last === undefined ? '' : `: ${String(last)}`}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
