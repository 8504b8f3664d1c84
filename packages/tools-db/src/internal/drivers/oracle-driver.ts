import type { DatabaseConfig } from '../../database-config.js';
import type { DialectDriver, DriverConnection, RowSink, RunOptions, RunOutcome } from '../driver.js';
import { loadDriver } from '../load-driver.js';
import { ROW_BATCH_SIZE } from '../run-error.js';

/** The part of an oracledb result set rho uses. */
export interface OracleResultSet {
  getRows(count: number): Promise<unknown[][]>;
  close(): Promise<void>;
}

/** The part of an oracledb execute() result rho uses. */
export interface OracleExecuteResult {
  metaData?: { name: string }[];
  resultSet?: OracleResultSet;
  rows?: unknown[][];
  rowsAffected?: number;
}

/** The part of an oracledb connection rho uses (a test fake implements just this). */
export interface OracleConnectionLike {
  callTimeout: number;
  execute(sql: string, binds: unknown[], options: Record<string, unknown>): Promise<OracleExecuteResult>;
  rollback(): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The part of the oracledb module rho uses. */
export interface OracleModuleLike {
  getConnection(attributes: {
    user?: string;
    password?: string;
    connectString?: string;
  }): Promise<OracleConnectionLike>;
  OUT_FORMAT_ARRAY: number;
  STRING?: unknown;
  DB_TYPE_DATE?: unknown;
  DB_TYPE_TIMESTAMP?: unknown;
  DB_TYPE_TIMESTAMP_TZ?: unknown;
  DB_TYPE_TIMESTAMP_LTZ?: unknown;
  DB_TYPE_NUMBER?: unknown;
  DB_TYPE_CLOB?: unknown;
  DB_TYPE_NCLOB?: unknown;
}

/** Where the Oracle driver comes from; tests replace it with a fake at the driver boundary. */
export type OracleModuleLoader = () => Promise<OracleModuleLike>;

const loadOracle: OracleModuleLoader = async () => {
  const module = await loadDriver<OracleModuleLike & { default?: OracleModuleLike }>('oracledb', 'Oracle');
  return module.default ?? module;
};

// Oracle rejects a trailing ';' after SQL (ORA-00933/ORA-00911) but needs it after a PL/SQL END.
function stripTerminator(sql: string): string {
  const trimmed = sql.trimEnd();
  if (!trimmed.endsWith(';') || /\bEND\s*(?:\w+\s*)?;$/i.test(trimmed)) return trimmed;
  return trimmed.slice(0, -1).trimEnd();
}

// Unquoted Oracle identifiers are stored upper-case; quoted mixed-case names are kept.
function identifier(name: string): string {
  return /^[a-z_][a-z0-9_$#]*$/.test(name) ? name.toUpperCase() : name;
}

class OracleConnection implements DriverConnection {
  constructor(
    private readonly oracledb: OracleModuleLike,
    private readonly connection: OracleConnectionLike,
  ) {}

  private executeOptions(): Record<string, unknown> {
    const oracledb = this.oracledb;
    const asText = new Set<unknown>(
      [
        oracledb.DB_TYPE_DATE,
        oracledb.DB_TYPE_TIMESTAMP,
        oracledb.DB_TYPE_TIMESTAMP_TZ,
        oracledb.DB_TYPE_TIMESTAMP_LTZ,
        oracledb.DB_TYPE_NUMBER,
        oracledb.DB_TYPE_CLOB,
        oracledb.DB_TYPE_NCLOB,
      ].filter((type) => type !== undefined),
    );
    return {
      outFormat: oracledb.OUT_FORMAT_ARRAY,
      resultSet: true,
      // Numbers, dates and LOBs as text: exact decimals, no time-zone shifts, no LOB handles.
      fetchTypeHandler: (metaData: { dbType?: unknown }) =>
        asText.has(metaData.dbType) ? { type: oracledb.STRING } : undefined,
    };
  }

  async run(sql: string, sink: RowSink, options: RunOptions): Promise<RunOutcome> {
    const connection = this.connection;
    // Oracle has no read-only session; a read-only transaction stops DML (DDL commits
    // implicitly and is stopped by the SQL policy and, for real, by a SELECT-only account).
    if (options.readonly) await connection.execute('SET TRANSACTION READ ONLY', [], {});
    try {
      const result = await connection.execute(stripTerminator(sql), options.params ?? [], this.executeOptions());
      if (result.resultSet === undefined && result.metaData === undefined) {
        return {
          hasResultSet: false,
          ...(result.rowsAffected === undefined ? {} : { affectedRows: result.rowsAffected }),
        };
      }
      await sink.columns((result.metaData ?? []).map((column) => column.name));
      if (result.resultSet === undefined) {
        if (result.rows !== undefined && result.rows.length > 0) await sink.rows(result.rows);
        return { hasResultSet: true };
      }
      try {
        for (;;) {
          if (options.signal?.aborted) throw new Error('the statement was cancelled');
          const rows = await result.resultSet.getRows(ROW_BATCH_SIZE);
          if (rows.length === 0) break;
          await sink.rows(rows);
          if (rows.length < ROW_BATCH_SIZE) break;
        }
      } finally {
        await result.resultSet.close();
      }
      return { hasResultSet: true };
    } finally {
      if (options.readonly) await connection.rollback();
    }
  }

  async ping(): Promise<void> {
    await this.connection.ping();
  }

  async writeAccess(): Promise<string | undefined> {
    const reasons: string[] = [];
    const privileges = await this.connection.execute('SELECT privilege FROM session_privs', [], {
      outFormat: this.oracledb.OUT_FORMAT_ARRAY,
    });
    const risky = (privileges.rows ?? [])
      .map((row) => String(row[0]))
      .filter((privilege) =>
        /\b(CREATE|ALTER|DROP|INSERT|UPDATE|DELETE|EXECUTE ANY|GRANT|BECOME|SYSDBA|SYSOPER|LOCK ANY)\b/.test(privilege),
      );
    if (risky.length > 0) reasons.push(`it has ${risky.slice(0, 8).join(', ')}${risky.length > 8 ? ', ...' : ''}`);
    const owned = await this.connection.execute('SELECT COUNT(*) FROM user_tables', [], {
      outFormat: this.oracledb.OUT_FORMAT_ARRAY,
    });
    const count = Number(owned.rows?.[0]?.[0] ?? 0);
    if (count > 0) reasons.push(`it owns ${count} tables`);
    return reasons.length === 0 ? undefined : reasons.join('; ');
  }

  async close(): Promise<void> {
    await this.connection.close().catch(() => undefined);
  }
}

/** Builds the Oracle driver; `load` is replaced by tests with a fake oracledb module. */
export function createOracleDriver(load: OracleModuleLoader = loadOracle): DialectDriver {
  return {
    type: 'oracle',
    label: 'Oracle',
    async connect(config: DatabaseConfig): Promise<DriverConnection> {
      const oracledb = await load();
      const connection = await oracledb.getConnection({
        ...(config.user === undefined ? {} : { user: config.user }),
        ...(config.password === undefined ? {} : { password: config.password }),
        ...(config.dsn === undefined ? {} : { connectString: config.dsn }),
      });
      // Applies to each round trip: a statement that runs longer is interrupted by the driver.
      connection.callTimeout = Math.round(config.statementTimeoutSeconds * 1000);
      return new OracleConnection(oracledb, connection);
    },
    listTables(pattern, schema) {
      if (schema === undefined) {
        return {
          sql: 'SELECT table_name, num_rows, last_analyzed FROM user_tables WHERE table_name LIKE :1 ORDER BY table_name',
          params: [pattern.toUpperCase()],
        };
      }
      return {
        sql: 'SELECT owner, table_name, num_rows, last_analyzed FROM all_tables WHERE table_name LIKE :1 AND owner = :2 ORDER BY table_name',
        params: [pattern.toUpperCase(), identifier(schema)],
      };
    },
    describeColumns(table, schema) {
      return {
        sql: `SELECT column_name,
                data_type || CASE WHEN data_type IN ('VARCHAR2', 'NVARCHAR2', 'CHAR', 'NCHAR', 'RAW') THEN '(' || char_length || ')'
                                  WHEN data_type = 'NUMBER' AND data_precision IS NOT NULL THEN '(' || data_precision || ',' || data_scale || ')'
                                  ELSE '' END,
                nullable, data_default
              FROM all_tab_columns WHERE table_name = :1 AND owner = NVL(:2, USER) ORDER BY column_id`,
        params: [identifier(table), schema === undefined ? null : identifier(schema)],
      };
    },
    describePrimaryKey(table, schema) {
      return {
        sql: `SELECT cc.column_name FROM all_constraints c
              JOIN all_cons_columns cc ON cc.owner = c.owner AND cc.constraint_name = c.constraint_name
              WHERE c.constraint_type = 'P' AND c.table_name = :1 AND c.owner = NVL(:2, USER) ORDER BY cc.position`,
        params: [identifier(table), schema === undefined ? null : identifier(schema)],
      };
    },
    describeForeignKeys(table, schema) {
      return {
        sql: `SELECT c.constraint_name, cc.column_name, rc.table_name, rcc.column_name FROM all_constraints c
              JOIN all_cons_columns cc ON cc.owner = c.owner AND cc.constraint_name = c.constraint_name
              JOIN all_constraints rc ON rc.owner = c.r_owner AND rc.constraint_name = c.r_constraint_name
              JOIN all_cons_columns rcc ON rcc.owner = rc.owner AND rcc.constraint_name = rc.constraint_name AND rcc.position = cc.position
              WHERE c.constraint_type = 'R' AND c.table_name = :1 AND c.owner = NVL(:2, USER) ORDER BY c.constraint_name, cc.position`,
        params: [identifier(table), schema === undefined ? null : identifier(schema)],
      };
    },
    describeIndexes(table, schema) {
      return {
        sql: `SELECT i.index_name, i.uniqueness, LISTAGG(ic.column_name, ', ') WITHIN GROUP (ORDER BY ic.column_position)
              FROM all_indexes i JOIN all_ind_columns ic ON ic.index_owner = i.owner AND ic.index_name = i.index_name
              WHERE i.table_name = :1 AND i.table_owner = NVL(:2, USER) GROUP BY i.index_name, i.uniqueness ORDER BY i.index_name`,
        params: [identifier(table), schema === undefined ? null : identifier(schema)],
      };
    },
  };
}

/** Oracle through oracledb in thin mode (no Instant Client needed). */
export const oracleDriver: DialectDriver = createOracleDriver();
