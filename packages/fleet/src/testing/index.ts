// Helpers for tests that need a PostgreSQL server (the fleet's, the queue's, the CLI's): the
// shared server of a test machine, and a probe that skips locally but fails under CI when it does
// not answer. postgres.js loads only when a probe runs, so importing this entry stays cheap.

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
