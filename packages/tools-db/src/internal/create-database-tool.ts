import type { FileHandle } from 'node:fs/promises';
import { resolve } from 'node:path';
import { defineTool } from '@rho/core';
import { mustBeOneOf, requiredOneOf } from '@rho/core/internal';
import type { Tool, ToolResult } from '@rho/core';
import { checkSql, checkWritePath, databaseExportsEnabled, openWriteTarget } from '@rho/permissions';
import type { PermissionProfile, WriteTarget } from '@rho/permissions';
import type { DatabaseConfig, DatabaseType } from '../database-config.js';
import { AliasConnection } from './connection-cache.js';
import { CsvWriter } from './csv-writer.js';
import type { CatalogQuery, DialectDriver, DriverConnection, RowSink } from './driver.js';
import { cellText } from './cell-text.js';
import { DecisionCache } from './decision-cache.js';
import { formatTable } from './format-table.js';

/** A warning about a database connection, for the trace and the CLI (library code never prints). */
export interface DatabaseWarning {
  /** Alias the warning is about. */
  alias: string;
  /** Dialect of the alias. */
  type: DatabaseType;
  /** Stable kind of warning. */
  kind: 'account_can_write';
  /** What happened and what to do about it. */
  message: string;
}

/** Settings shared by all database tools of one `dbTools()` call. */
export interface DatabaseToolSettings {
  profile: PermissionProfile;
  workingDir: string | undefined;
  onWarning: ((warning: DatabaseWarning) => void) | undefined;
  /** Test-only: skip the SQL policy so the database's own read-only layer can be tested alone. */
  skipSqlPolicy: boolean;
}

/** The server context of drivers that read none: one object, so their decisions are cached too. */
const NO_SERVER_CONTEXT = Object.freeze({});

const OPERATIONS = ['query', 'list_tables', 'describe', 'export_query'] as const;
const DEFAULT_ROW_LIMIT = 100;
const MAX_ROW_LIMIT = 10_000;

/** Collects rows into memory: every row for catalog queries, or the first `limit` and a count. */
class CollectSink implements RowSink {
  names: string[] = [];
  kept: unknown[][] = [];
  total = 0;

  constructor(private readonly limit: number) {}

  columns(names: string[]): void {
    this.names = names;
  }

  rows(batch: unknown[][]): void {
    for (const row of batch) {
      if (this.kept.length < this.limit) this.kept.push(row);
      this.total += 1;
    }
  }
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s+$/, '');
}

/** A model-visible failure. */
function failure(content: string, metadata?: Record<string, unknown>): ToolResult {
  return metadata === undefined ? { content, success: false } : { content, success: false, metadata };
}

/** Builds the tool serving every alias of one dialect. */
export function createDatabaseTool(
  driver: DialectDriver,
  configs: readonly DatabaseConfig[],
  settings: DatabaseToolSettings,
): { tool: Tool; close: () => Promise<void> } {
  const readonly = settings.profile.database !== 'mutations';
  const aliases = configs.map((config) => config.alias).sort();
  const warned = new Map<string, DatabaseWarning>();
  const pendingWarnings = new Map<string, DatabaseWarning>();
  const connections = new Map<string, AliasConnection>();
  for (const config of configs) {
    connections.set(
      config.alias,
      new AliasConnection(config, driver, readonly, async (connection: DriverConnection, first: boolean) => {
        if (!readonly || !first || warned.has(config.alias)) return;
        let reason: string | undefined;
        try {
          reason = await connection.writeAccess();
        } catch (error) {
          reason = `rho could not check the account's privileges (${messageOf(error)})`;
        }
        if (reason === undefined) return;
        const warning: DatabaseWarning = {
          alias: config.alias,
          type: driver.type,
          kind: 'account_can_write',
          message:
            `Database "${config.alias}" (${driver.label}): the configured account can write: ${reason}. ` +
            'rho runs every statement in a read-only session and transaction and refuses non-read SQL, ' +
            'but only a SELECT-only account is a real guarantee; see the @rho/tools-db README for the GRANTs.',
        };
        warned.set(config.alias, warning);
        pendingWarnings.set(config.alias, warning);
        settings.onWarning?.(warning);
      }),
    );
  }

  // export_query writes a file: offered only when the profile enables exports (never under
  // `readonly`, whatever approves the call), and refused by checkWritePath otherwise.
  const exportsEnabled = databaseExportsEnabled(settings.profile);
  const operations = exportsEnabled ? OPERATIONS : OPERATIONS.filter((operation) => operation !== 'export_query');
  const accessText = readonly
    ? 'read-only: one read statement per call, run in a read-only transaction'
    : 'full (writes allowed)';
  const description =
    `Query ${driver.label} databases [${aliases.length === 0 ? 'none configured' : aliases.join(', ')}]. Operations: ` +
    "'list_tables' lists tables and views (table_pattern: SQL LIKE pattern, default %; schema optional), " +
    "'describe' shows a table's columns, primary key, foreign keys and indexes (table_name, schema optional), " +
    `'query' runs one SQL statement and shows up to row_limit rows (default ${DEFAULT_ROW_LIMIT}, at most ${MAX_ROW_LIMIT}) with the exact count of rows left out${exportsEnabled ? ',' : '.'} ` +
    (exportsEnabled
      ? "'export_query' streams every row of one query to a new CSV file at export_path, which must end in .csv (or .tsv for tab-separated) and not exist yet. "
      : `No 'export_query': the '${settings.profile.name}' profile does not allow database exports. `) +
    `Access: ${accessText}.`;

  const parameters = {
    type: 'object',
    properties: {
      database: {
        type: 'string',
        description: aliases.length <= 1 ? 'Database alias (optional: there is only one).' : 'Database alias to use.',
        enum: aliases,
      },
      operation: { type: 'string', description: 'What to do.', enum: operations },
      sql: { type: 'string', description: "One SQL statement, for 'query' and 'export_query'." },
      table_pattern: { type: 'string', description: "SQL LIKE pattern for 'list_tables' (default %)." },
      table_name: { type: 'string', description: "Table to 'describe'." },
      schema: {
        type: 'string',
        description: "Schema (or owner) for 'list_tables' and 'describe'; default: the current one.",
      },
      row_limit: {
        type: 'integer',
        description: `Rows to show for 'query' (default ${DEFAULT_ROW_LIMIT}).`,
        minimum: 1,
        maximum: MAX_ROW_LIMIT,
        default: DEFAULT_ROW_LIMIT,
      },
      export_path: {
        type: 'string',
        description: "New .csv or .tsv file for 'export_query'; relative paths resolve against the working directory.",
      },
      // rho-agent's documentation called it output_path: calls written for it still work.
      output_path: { type: 'string', description: 'Same as export_path (the name rho-agent documented).' },
    },
    required: aliases.length <= 1 ? ['operation'] : ['database', 'operation'],
    additionalProperties: false,
  } as const;

  const errorPrefix = `${driver.label} error`;
  const decisions = new DecisionCache();

  // The one SQL decision of @rho/permissions, given what was read from this alias's server
  // (its function catalog and lexical settings, once per connection).
  // A statement sent again is not judged again (see DecisionCache).
  async function policy(alias: AliasConnection, sql: string): Promise<string | undefined> {
    if (!readonly || settings.skipSqlPolicy) return undefined;
    const context = driver.readsServerContext === true ? await alias.serverContext() : NO_SERVER_CONTEXT;
    let decision = decisions.get(context, sql);
    if (decision === undefined) {
      decision = await checkSql(sql, driver.type, context);
      decisions.set(context, sql, decision);
    }
    return decision.allowed ? undefined : decision.reason;
  }

  async function catalog(alias: AliasConnection, query: CatalogQuery): Promise<CollectSink> {
    const sink = new CollectSink(Number.POSITIVE_INFINITY);
    await alias.run(query.sql, sink, { readonly, params: query.params });
    return sink;
  }

  const tool = defineTool({
    name: driver.type,
    description,
    parameters,
    annotations: readonly ? { readOnly: true } : { destructive: true },
    async handle({ arguments: args }, context): Promise<ToolResult> {
      let alias: string;
      if (args.database !== undefined && args.database !== '') {
        if (!connections.has(args.database))
          return failure(`Unknown database: ${mustBeOneOf('database', aliases, args.database)}`);
        alias = args.database;
      } else if (aliases.length === 1 && aliases[0] !== undefined) {
        alias = aliases[0];
      } else {
        return failure(requiredOneOf('database', aliases));
      }
      if (args.export_path && args.output_path && args.export_path !== args.output_path) {
        return failure(
          `export_path and output_path name the same parameter and disagree ("${args.export_path}" and "${args.output_path}"); pass only export_path.`,
        );
      }
      const exportPath = args.export_path || args.output_path;
      const connection = connections.get(alias) as AliasConnection;
      const attachWarning = (result: ToolResult): ToolResult => {
        const warning = pendingWarnings.get(alias);
        if (warning === undefined) return result;
        pendingWarnings.delete(alias);
        return { ...result, metadata: { ...result.metadata, warning: warning.message } };
      };
      try {
        switch (args.operation) {
          case 'query':
            return attachWarning(await runQuery(connection, args.sql, args.row_limit, context.signal));
          case 'list_tables':
            return attachWarning(await listTables(connection, args.table_pattern, args.schema));
          case 'describe':
            return attachWarning(await describe(connection, args.table_name, args.schema));
          case 'export_query':
            if (!exportsEnabled) {
              return failure(
                `Export blocked: export_query writes a file, which the '${settings.profile.name}' profile does not allow (database_exports is off). Use the query operation to see the rows.`,
                { blocked: true, rule: 'database_exports.off' },
              );
            }
            return attachWarning(
              await exportQuery(
                connection,
                args.sql,
                exportPath,
                settings.workingDir ?? context.workingDir,
                context.signal,
              ),
            );
          default:
            return failure(`Unknown operation: ${mustBeOneOf('operation', operations, args.operation)}`);
        }
      } catch (error) {
        return attachWarning(failure(`${errorPrefix}: ${messageOf(error)}`));
      }
    },
  });

  async function runQuery(
    alias: AliasConnection,
    sql: string | undefined,
    rowLimit: number | undefined,
    signal: AbortSignal,
  ): Promise<ToolResult> {
    if (sql === undefined || sql.trim() === '') return failure('No SQL query provided');
    const refusal = await policy(alias, sql);
    if (refusal !== undefined) return failure(`Query blocked: ${refusal}`, { blocked: true });
    const limit = Math.min(MAX_ROW_LIMIT, Math.max(1, Math.trunc(rowLimit ?? DEFAULT_ROW_LIMIT)));
    const sink = new CollectSink(limit);
    const outcome = await alias.run(sql, sink, { readonly, signal });
    if (!outcome.hasResultSet) {
      const affected = outcome.affectedRows === undefined ? '' : ` (${outcome.affectedRows} rows affected)`;
      return {
        content: `Query executed (no result set)${affected}`,
        success: true,
        metadata: { affected_rows: outcome.affectedRows },
      };
    }
    const more = sink.total - sink.kept.length;
    return {
      content: formatTable(sink.names, sink.kept, more),
      success: true,
      metadata: { columns: sink.names, row_count: sink.kept.length, total_rows: sink.total, truncated: more > 0 },
    };
  }

  async function listTables(
    alias: AliasConnection,
    pattern: string | undefined,
    schema: string | undefined,
  ): Promise<ToolResult> {
    const like = pattern === undefined || pattern === '' ? '%' : pattern;
    const sink = await catalog(alias, driver.listTables(like, schema === '' ? undefined : schema));
    if (sink.total === 0)
      return { content: `No tables found matching pattern: ${like}`, success: true, metadata: { table_count: 0 } };
    return { content: formatTable(sink.names, sink.kept, 0), success: true, metadata: { table_count: sink.total } };
  }

  async function describe(
    alias: AliasConnection,
    table: string | undefined,
    rawSchema: string | undefined,
  ): Promise<ToolResult> {
    if (table === undefined || table.trim() === '') return failure('No table_name provided');
    const schema = rawSchema === '' ? undefined : rawSchema;
    const columns = await catalog(alias, driver.describeColumns(table, schema));
    if (columns.total === 0) return failure(`Table not found: ${table}`);
    const primaryKey = await catalog(alias, driver.describePrimaryKey(table, schema));
    const foreignKeys = await catalog(alias, driver.describeForeignKeys(table, schema));
    const indexes = await catalog(alias, driver.describeIndexes(table, schema));
    const text = (value: unknown): string => cellText(value) ?? '';
    const lines = [`Table: ${schema === undefined ? table : `${schema}.${table}`}`, '', 'Columns:', '-'.repeat(80)];
    for (const [name, type, nullable, fallback] of columns.kept) {
      const isNullable = ['Y', 'YES', '1', 'TRUE'].includes(text(nullable).toUpperCase());
      // MariaDB reports a missing default as the text NULL.
      const defaultText =
        fallback === null || fallback === undefined || text(fallback).toUpperCase() === 'NULL'
          ? ''
          : ` DEFAULT ${text(fallback).trim()}`;
      lines.push(
        `  ${text(name).padEnd(30)} ${text(type).padEnd(20)} ${isNullable ? 'NULL' : 'NOT NULL'}${defaultText}`.trimEnd(),
      );
    }
    if (primaryKey.total > 0) lines.push('', `Primary Key: (${primaryKey.kept.map((row) => text(row[0])).join(', ')})`);
    if (foreignKeys.total > 0) {
      lines.push('', 'Foreign Keys:');
      const grouped = new Map<string, { columns: string[]; table: string; referenced: string[] }>();
      for (const [name, column, referencedTable, referencedColumn] of foreignKeys.kept) {
        const key = text(name);
        const entry = grouped.get(key) ?? { columns: [], table: text(referencedTable), referenced: [] };
        entry.columns.push(text(column));
        entry.referenced.push(text(referencedColumn));
        grouped.set(key, entry);
      }
      for (const [name, entry] of grouped) {
        lines.push(`  ${name}: (${entry.columns.join(', ')}) -> ${entry.table}(${entry.referenced.join(', ')})`);
      }
    }
    if (indexes.total > 0) {
      lines.push('', 'Indexes:');
      for (const [name, unique, indexColumns] of indexes.kept) {
        const columnsText =
          indexColumns === null || indexColumns === undefined || text(indexColumns) === ''
            ? ''
            : ` on (${text(indexColumns)})`;
        lines.push(`  ${text(name)} (${text(unique)})${columnsText}`);
      }
    }
    return {
      content: lines.join('\n'),
      success: true,
      metadata: {
        table_name: table,
        column_count: columns.total,
        primary_key: primaryKey.kept.map((row) => text(row[0])),
      },
    };
  }

  async function exportQuery(
    alias: AliasConnection,
    sql: string | undefined,
    exportPath: string | undefined,
    workingDir: string,
    signal: AbortSignal,
  ): Promise<ToolResult> {
    if (exportPath === undefined || exportPath.trim() === '') return failure('No export_path provided');
    if (sql === undefined || sql.trim() === '') return failure('No SQL query provided');
    const requested = resolve(workingDir, exportPath);
    // The one write decision of @rho/permissions (the one `rho policy check --write PATH --via
    // export_query` shows): a new .csv/.tsv file, inside the working directory or the profile's
    // file_write.roots, never a sensitive or auto-executed name, whatever the file_write mode.
    const pathDecision = await checkWritePath(exportPath, { profile: settings.profile, workingDir, writer: 'export' });
    if (!pathDecision.allowed)
      return failure(`Export blocked: ${pathDecision.reason}`, { blocked: true, rule: pathDecision.rule });
    const refusal = await policy(alias, sql);
    if (refusal !== undefined) return failure(`Query blocked: ${refusal}`, { blocked: true });
    const realPath = pathDecision.realPath;
    // Create the file relative to its parent directory, opened once without following links: a
    // link swapped into the path after the decision cannot redirect the export.
    let target: WriteTarget;
    try {
      target = await openWriteTarget(realPath, { createParents: true });
    } catch (error) {
      return failure(`Export blocked: ${messageOf(error)}`, { blocked: true });
    }
    let file: FileHandle;
    try {
      file = await target.openExclusive(0o644);
    } catch (error) {
      target.close();
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        return failure(
          `File already exists: ${requested}. export_query never overwrites a file; choose a new export_path.`,
        );
      }
      throw error;
    }
    const writer = new CsvWriter(file, undefined, realPath.toLowerCase().endsWith('.tsv') ? '\t' : ',');
    let columnNames: string[] = [];
    let rowCount = 0;
    let keep = false;
    try {
      const sink: RowSink = {
        columns: (names) => {
          columnNames = names;
          return writer.write([names]);
        },
        rows: (batch) => {
          rowCount += batch.length;
          return writer.write(batch);
        },
      };
      const outcome = await alias.run(sql, sink, { readonly, signal, backpressure: true });
      if (!outcome.hasResultSet) return failure('Query executed but returned no result set');
      await writer.flush();
      keep = true;
    } catch (error) {
      return failure(`${driver.label} export error: ${messageOf(error)}`);
    } finally {
      await file.close();
      if (!keep) await target.remove().catch(() => undefined);
      target.close();
    }
    return {
      content: `Exported ${rowCount} rows (${columnNames.length} columns) to ${requested} (${writer.bytes} bytes)`,
      success: true,
      metadata: {
        path: realPath,
        row_count: rowCount,
        column_count: columnNames.length,
        columns: columnNames,
        size_bytes: writer.bytes,
      },
    };
  }

  return {
    tool: tool as unknown as Tool,
    close: async () => {
      await Promise.all([...connections.values()].map((connection) => connection.close()));
    },
  };
}
