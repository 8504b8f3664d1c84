import type { DatabaseConfig, DatabaseType } from './database-config.js';
import { describeTarget } from './internal/connection-cache.js';
import type { DialectDriver, DriverConnection } from './internal/driver.js';
import { DIALECT_DRIVERS } from './internal/drivers/index.js';
import { sqliteEngine } from './internal/drivers/sqlite-engine.js';
import { loadDriver } from './internal/load-driver.js';

/**
 * How {@link probeDatabase} ended: the server answered; the driver package is not installed, or
 * is installed and fails to load; the server refused or could not be reached; or it gave no
 * answer in time.
 */
export type DatabaseProbeStatus = 'ok' | 'driver_missing' | 'driver_failed' | 'unreachable' | 'timeout';

/** What {@link probeDatabase} found for one alias. Never holds the password. */
export interface DatabaseProbe {
  alias: string;
  type: DatabaseType;
  /** The engine's name for people (`PostgreSQL`, `MySQL`). */
  label: string;
  /** Where: `host:port/database`, the SQLite file, or the Oracle DSN. */
  target: string;
  /** The account, when one is configured. */
  user?: string;
  /** The package the driver loads (`postgres`, `mysql2`, `better-sqlite3`, `node:sqlite`, ...). */
  driverPackage: string;
  status: DatabaseProbeStatus;
  /** What failed, with the configured password removed (absent when the status is `ok`). */
  message?: string;
  /** How long the connection and its round trip took, in milliseconds. */
  elapsedMs: number;
}

/** Options of {@link probeDatabase}. */
export interface ProbeDatabaseOptions {
  /** Longest wait for the driver, the connection and one round trip together (default 5,000 ms). */
  timeoutMs?: number;
  /** Replace dialect drivers (tests). */
  drivers?: Partial<Record<DatabaseType, DialectDriver>>;
}

/** The package each dialect's driver imports when it connects. */
function driverPackageOf(type: DatabaseType): string {
  switch (type) {
    case 'postgres':
      return 'postgres';
    case 'mysql':
      return 'mysql2';
    case 'oracle':
      return 'oracledb';
    case 'vertica':
      return 'vertica-nodejs';
    case 'sqlite':
      return sqliteEngine();
  }
}

const TIMED_OUT = Symbol('timed out');

/**
 * Whether an alias's database can be used: its driver package is importable (loaded now, and
 * only now), and the server answers a connection and a trivial round trip (`SELECT 1`, a ping)
 * with the alias's account, read-only, within `timeoutMs`. Never throws: every outcome is a
 * {@link DatabaseProbeStatus}, its message without the configured password. A connection that
 * opens after the timeout is closed when it does.
 */
export async function probeDatabase(
  config: DatabaseConfig,
  options: ProbeDatabaseOptions = {},
): Promise<DatabaseProbe> {
  const driver = options.drivers?.[config.type] ?? DIALECT_DRIVERS[config.type];
  const timeoutMs = options.timeoutMs ?? 5_000;
  const started = Date.now();
  const target =
    config.type === 'sqlite' || config.type === 'oracle'
      ? describeTarget(config, driver)
      : `${describeTarget(config, driver)}/${config.database ?? ''}`;
  const driverPackage = driverPackageOf(config.type);
  const base = {
    alias: config.alias,
    type: config.type,
    label: driver.label,
    target,
    ...(config.user === undefined || config.user === '' ? {} : { user: config.user }),
    driverPackage,
  };
  const clean = (message: string): string =>
    config.password === undefined || config.password === ''
      ? message
      : message.split(config.password).join('[password]');
  const ended = (status: DatabaseProbeStatus, message?: string): DatabaseProbe => ({
    ...base,
    status,
    ...(message === undefined ? {} : { message: clean(message) }),
    elapsedMs: Date.now() - started,
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), timeoutMs);
    timer.unref();
  });
  try {
    // node:sqlite is Node's own; every other engine is a package that may be missing.
    if (driverPackage !== 'node:sqlite' && options.drivers?.[config.type] === undefined) {
      const loaded = await Promise.race([
        loadDriver(driverPackage, driver.label).then(
          () => undefined,
          (error: unknown) => error as { code?: string; message: string },
        ),
        deadline,
      ]);
      if (loaded === TIMED_OUT)
        return ended('timeout', `loading the ${driverPackage} package took over ${timeoutMs} ms`);
      if (loaded !== undefined)
        return ended(loaded.code === 'driver_missing' ? 'driver_missing' : 'driver_failed', loaded.message);
    }
    const connecting = driver.connect(config, { readonly: true });
    const answered = await Promise.race([
      connecting.then(async (connection: DriverConnection) => {
        try {
          await connection.ping();
          return undefined;
        } finally {
          await connection.close();
        }
      }),
      deadline,
    ]);
    // A connection that opens later is pinged and closed by the branch above.
    if (answered === TIMED_OUT) return ended('timeout', `no answer from ${target} within ${timeoutMs / 1000} s`);
    return ended('ok');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'driver_missing' || code === 'driver_failed') return ended(code, (error as Error).message);
    return ended('unreachable', failureText(error));
  } finally {
    clearTimeout(timer);
  }
}

/** An error's message; an AggregateError's (both addresses of `localhost` refused) is its errors'. */
function failureText(error: unknown): string {
  if (error instanceof AggregateError && error.message === '')
    return [...new Set(error.errors.map((inner: unknown) => failureText(inner)))].join('; ');
  if (!(error instanceof Error)) return String(error);
  if (error.message !== '') return error.message;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : 'the connection failed';
}
