import type { SqlServerContext } from '@rho/permissions/internal';
import type { DatabaseConfig, DatabaseType } from '../database-config.js';

/**
 * Receives a result set as it streams from the server. Returning a promise applies backpressure:
 * the driver reads no further rows until it settles.
 */
export interface RowSink {
  /** Called once with the column names, before any row (also for an empty result set). */
  columns(names: string[]): void | Promise<void>;
  /** Called with consecutive batches of rows, each row an array in column order. */
  rows(batch: unknown[][]): void | Promise<void>;
}

/** How one statement runs. */
export interface RunOptions {
  /** Run inside the database's own read-only transaction, always rolled back. */
  readonly: boolean;
  /** Bind parameters (only for rho's own catalog queries; model SQL never has any). */
  params?: unknown[];
  /** Stops the statement (the driver cancels it on the server where it can). */
  signal?: AbortSignal;
  /**
   * The sink is slow (a file): fetch rows only as fast as it takes them, even at the cost of
   * extra round trips. Otherwise rows stream at full speed into a sink that keeps up.
   */
  backpressure?: boolean;
}

/** What a statement produced besides its rows. */
export interface RunOutcome {
  /** False for statements without a result set (DDL, DML without RETURNING, SET ...). */
  hasResultSet: boolean;
  /** Rows changed by DML, when the driver reports it. */
  affectedRows?: number;
}

/** One open connection of a dialect driver, used by one call at a time. */
export interface DriverConnection {
  /** Runs exactly one statement and streams its rows into `sink`. */
  run(sql: string, sink: RowSink, options: RunOptions): Promise<RunOutcome>;
  /** Cheap round trip that proves the connection usable (after a failure, or a long idle). */
  ping(): Promise<void>;
  /**
   * Whether the driver already knows, without asking the server, that the connection cannot be
   * used (the server closed it, a reset failed). Connections that implement this are not pinged
   * before reuse; the others are, after a few seconds of idleness.
   */
  isBroken?(): boolean;
  /**
   * Why the connected account could change data, or undefined when it looks SELECT-only. Used to
   * warn that the database's read-only session is not the strongest guarantee.
   */
  writeAccess(): Promise<string | undefined>;
  /**
   * What the SQL policy needs to know about this server, read once per connection: the function
   * catalog (PostgreSQL pg_proc), the lexical settings (standard_conforming_strings, sql_mode),
   * the current database. Dialects without anything to read leave it out.
   */
  serverContext?(): Promise<SqlServerContext>;
  /**
   * Whether what `serverContext` read may be out of date (PostgreSQL: a function, operator,
   * cast, type, view or policy was created or changed since). Asked before every readonly
   * decision; when true, the context is read again. Dialects whose context cannot change leave it out.
   */
  serverContextChanged?(): Promise<boolean>;
  /** Closes the connection; never throws. */
  close(): Promise<void>;
}

/** A catalog query with its parameters. */
export interface CatalogQuery {
  sql: string;
  params: unknown[];
}

/** Per-dialect knowledge: connecting, and the SQL of `list_tables` and `describe`. */
export interface DialectDriver {
  /** The dialect, which is also the tool's name. */
  readonly type: DatabaseType;
  /** Display name used in messages ("PostgreSQL"). */
  readonly label: string;
  /**
   * The driver's connections read a server context for the SQL policy (`serverContext`): the
   * readonly tool then opens the connection before it decides. Others are decided without one.
   */
  readonly readsServerContext?: boolean;
  /** Opens a connection; `readonly` sets the session read-only where the database supports it. */
  connect(config: DatabaseConfig, settings: { readonly: boolean }): Promise<DriverConnection>;
  /** Tables (and views) whose name matches a LIKE `pattern`: columns table_name, type (and more). */
  listTables(pattern: string, schema: string | undefined): CatalogQuery;
  /** Columns: rows of [name, type, nullable(YES/NO/Y/N/1/0), default]. */
  describeColumns(table: string, schema: string | undefined): CatalogQuery;
  /** Primary key columns in order: rows of [column]. */
  describePrimaryKey(table: string, schema: string | undefined): CatalogQuery;
  /** Foreign keys: rows of [name, column, referenced_table, referenced_column]. */
  describeForeignKeys(table: string, schema: string | undefined): CatalogQuery;
  /** Indexes: rows of [name, unique(boolean-ish or label), columns]. */
  describeIndexes(table: string, schema: string | undefined): CatalogQuery;
}
