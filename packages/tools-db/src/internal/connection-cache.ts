import { ConfigError } from '@rho/core';
import type { SqlServerContext } from '@rho/permissions/internal';
import type { DatabaseConfig } from '../database-config.js';
import type { DialectDriver, DriverConnection, RowSink, RunOptions, RunOutcome } from './driver.js';
import { StatementError } from './run-error.js';

// A connection idle for longer than this is pinged before reuse, unless its driver can tell
// locally whether it is still open; recently used ones are not, so that a burst of calls pays
// no extra round trip.
const HEALTH_CHECK_AFTER_IDLE_MS = 5_000;

const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'PROTOCOL_CONNECTION_LOST',
]);

/** Whether an error means the server is unreachable rather than that the SQL failed. */
export function isConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
  if ((error as { fatal?: unknown }).fatal === true) return true;
  const errors = (error as { errors?: unknown }).errors;
  return Array.isArray(errors) && errors.some(isConnectionError);
}

/** Where a server was expected, for "cannot connect" messages. */
export function describeTarget(config: DatabaseConfig, driver: DialectDriver): string {
  if (config.type === 'sqlite') return config.path ?? '';
  if (config.type === 'oracle') return config.dsn ?? '';
  const ports: Record<string, number> = { postgres: 5432, mysql: 3306, vertica: 5433 };
  return `${config.host ?? 'localhost'}:${config.port ?? ports[driver.type] ?? ''}`;
}

/**
 * One cached connection per alias, used by one call at a time (calls queue), reconnected when a
 * health check or a connection-level error shows it is gone.
 */
export class AliasConnection {
  private connection: DriverConnection | undefined;
  private lastUsed = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private firstConnect = true;
  private readonly contexts = new WeakMap<DriverConnection, SqlServerContext>();

  constructor(
    readonly config: DatabaseConfig,
    readonly driver: DialectDriver,
    private readonly readonly: boolean,
    private readonly onConnect: (connection: DriverConnection, first: boolean) => Promise<void>,
  ) {}

  /** Runs `work` with exclusive use of a live connection. */
  private use<T>(work: (connection: DriverConnection) => Promise<T>): Promise<T> {
    const next = this.queue.then(async () => {
      const connection = await this.acquire();
      try {
        return await work(connection);
      } catch (error) {
        // After any failure the connection must prove it is still usable (a cancelled
        // statement may have closed it); otherwise the next call gets a fresh one.
        if (isConnectionError(error) || !(await this.alive(connection))) {
          await this.drop();
        }
        throw error;
      } finally {
        this.lastUsed = Date.now();
      }
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Runs one statement. A read-only statement that fails because the connection was lost before
   * anything reached the sink runs once more, on a fresh connection: it changed nothing (its
   * transaction, if it began, ended with the session), and the server may just have closed an
   * idle session. A write is never sent twice.
   */
  run(sql: string, sink: RowSink, options: RunOptions): Promise<RunOutcome> {
    let touched = false;
    const tracked: RowSink = {
      columns: (names) => {
        touched = true;
        return sink.columns(names);
      },
      rows: (batch) => {
        touched = true;
        return sink.rows(batch);
      },
    };
    const attempt = (): Promise<RunOutcome> => this.use((connection) => connection.run(sql, tracked, options));
    if (!options.readonly) return attempt();
    return attempt().catch((error: unknown) => {
      if (touched || options.signal?.aborted === true || !isConnectionError(error)) throw error;
      return attempt();
    });
  }

  /**
   * What the SQL policy needs to know about the server, read once per connection (the catalog
   * read costs one round trip when a connection opens) and again whenever the driver reports
   * that it changed (a function or view created by another session mid-session is judged too).
   */
  serverContext(): Promise<SqlServerContext> {
    const attempt = (): Promise<SqlServerContext> =>
      this.use(async (connection) => {
        const known = this.contexts.get(connection);
        if (known !== undefined && !(await connection.serverContextChanged?.())) return known;
        const context = (await connection.serverContext?.()) ?? {};
        this.contexts.set(connection, context);
        return context;
      });
    // Reading changes nothing: a connection the server closed while idle is replaced, once.
    return attempt().catch((error: unknown) => {
      if (!isConnectionError(error)) throw error;
      return attempt();
    });
  }

  /** Closes the cached connection, if any. */
  async close(): Promise<void> {
    await this.queue;
    await this.drop();
  }

  private async alive(connection: DriverConnection): Promise<boolean> {
    try {
      await connection.ping();
      return true;
    } catch {
      return false;
    }
  }

  private async drop(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    if (connection !== undefined) await connection.close();
  }

  private async acquire(): Promise<DriverConnection> {
    const current = this.connection;
    if (current !== undefined) {
      const broken = current.isBroken?.();
      if (broken === true) {
        await this.drop();
      } else if (
        broken === undefined &&
        Date.now() - this.lastUsed > HEALTH_CHECK_AFTER_IDLE_MS &&
        !(await this.alive(current))
      ) {
        await this.drop();
      }
    }
    if (this.connection === undefined) {
      let connection: DriverConnection;
      try {
        connection = await this.driver.connect(this.config, { readonly: this.readonly });
      } catch (error) {
        if (ConfigError.isInstance(error)) throw error;
        const reason = (error as Error).message || String(error);
        const hint = isConnectionError(error) ? ' Is the server running and reachable?' : '';
        throw new StatementError(
          `cannot connect to ${this.driver.label} database "${this.config.alias}" at ${describeTarget(this.config, this.driver)}: ${reason}.${hint}`,
          { cause: error },
        );
      }
      this.connection = connection;
      const first = this.firstConnect;
      this.firstConnect = false;
      await this.onConnect(connection, first);
    }
    return this.connection;
  }
}
