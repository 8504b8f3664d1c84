import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { ConfigError } from '@rho/core';
import type { DatabaseConfig, DatabaseType } from './database-config.js';
import { describeTarget } from './internal/connection-cache.js';
import type { DialectDriver, DriverConnection } from './internal/driver.js';
import { DIALECT_DRIVERS } from './internal/drivers/index.js';

/** One thing the configured account can do that a read-only agent's account should not. */
export interface AccountFinding {
  /**
   * Stable kind: `superuser`, `create_role`, `create_database`, `replication`, `bypass_rls`,
   * `role_membership`, `table_write`, `sequence_write`, `schema_create`, `database_create`,
   * `extension` (PostgreSQL); `admin_privilege`, `write_privilege`, `grant_option`,
   * `role_unreadable` (MariaDB/MySQL); `file_writable` (SQLite).
   */
  kind: string;
  /** What the account can do and why it matters, in one sentence. */
  message: string;
  /** The objects concerned (tables, schemas, roles, privileges), when there are any. */
  objects?: string[];
}

/** What {@link checkDatabaseAccount} found for one alias. */
export interface AccountCheck {
  alias: string;
  type: DatabaseType;
  /** The account checked (`user@host:port/database`, or the SQLite file). */
  account: string;
  /** Empty when the account looks fit for read-only use. */
  findings: AccountFinding[];
  /** SQL (or, for SQLite, shell) that sets up a least-privilege read account. */
  grantScript: string;
}

/** Options of {@link checkDatabaseAccount}. */
export interface CheckDatabaseAccountOptions {
  /** Name of the read role in the GRANT script (default `rho_reader`). */
  readerName?: string;
  /** Replace dialect drivers (tests). */
  drivers?: Partial<Record<DatabaseType, DialectDriver>>;
}

/** Dialects `checkDatabaseAccount` knows. */
export const ACCOUNT_CHECK_TYPES: readonly DatabaseType[] = ['postgres', 'mysql', 'sqlite'];

/**
 * Connects with an alias's configured account and reports what it can do that it should not for
 * read-only use (PostgreSQL: role attributes, dangerous predefined roles, write grants, CREATE,
 * dblink/postgres_fdw; MariaDB/MySQL: admin and write privileges, GRANT OPTION; SQLite: a file
 * writable by this process), with a GRANT script for a least-privilege read account.
 */
export async function checkDatabaseAccount(
  config: DatabaseConfig,
  options: CheckDatabaseAccountOptions = {},
): Promise<AccountCheck> {
  const reader = options.readerName ?? 'rho_reader';
  if (config.type === 'sqlite') return checkSqliteFile(config);
  if (!ACCOUNT_CHECK_TYPES.includes(config.type)) {
    throw new ConfigError({
      code: 'account_check_unsupported',
      message: `Database "${config.alias}" is ${config.type}: rho db check knows ${ACCOUNT_CHECK_TYPES.join(', ')}; see the @rho/tools-db README for ${config.type}'s GRANTs.`,
    });
  }
  const driver = options.drivers?.[config.type] ?? DIALECT_DRIVERS[config.type];
  const account = `${config.user ?? ''}@${describeTarget(config, driver)}/${config.database ?? ''}`;
  let connection: DriverConnection;
  try {
    connection = await driver.connect(config, { readonly: true });
  } catch (error) {
    if (ConfigError.isInstance(error)) throw error;
    throw new ConfigError({
      code: 'account_check_connect',
      message: `cannot connect to ${driver.label} database "${config.alias}" at ${describeTarget(config, driver)}: ${(error as Error).message}`,
      cause: error,
    });
  }
  try {
    const rows = async (sql: string, params: unknown[] = []): Promise<unknown[][]> => {
      const collected: unknown[][] = [];
      await connection.run(
        sql,
        { columns: () => undefined, rows: (batch) => void collected.push(...batch) },
        {
          readonly: true,
          params,
        },
      );
      return collected;
    };
    const result =
      config.type === 'postgres' ? await checkPostgres(rows, config, reader) : await checkMysql(rows, config, reader);
    return { alias: config.alias, type: config.type, account, ...result };
  } finally {
    await connection.close();
  }
}

type Rows = (sql: string, params?: unknown[]) => Promise<unknown[][]>;

/** Lists at most this many objects in a finding's message (all of them stay in `objects`). */
const SHOWN = 8;

function shown(objects: string[]): string {
  return objects.length <= SHOWN
    ? objects.join(', ')
    : `${objects.slice(0, SHOWN).join(', ')} and ${objects.length - SHOWN} more`;
}

/** Constant names (rho's own lists) as an SQL list of string literals. */
const sqlList = (names: string[]): string => names.map((name) => `'${name.replaceAll("'", "''")}'`).join(', ');

const quoteIdentifier = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** Predefined PostgreSQL roles a read-only agent's account must not be a member of, and why. */
const POSTGRES_RISKY_ROLES: Record<string, string> = {
  pg_signal_backend: 'cancels and terminates other sessions (pg_terminate_backend)',
  pg_write_all_data: 'writes every table',
  pg_execute_server_program: 'runs programs on the server (COPY ... PROGRAM)',
  pg_read_server_files: "reads the server's files (COPY FROM, pg_read_file)",
  pg_write_server_files: "writes the server's files (COPY TO)",
  pg_read_all_stats: "sees other sessions' statements (pg_stat_activity)",
  pg_monitor: "sees other sessions' statements and the server's settings",
  pg_read_all_settings: 'reads every server setting',
  pg_checkpoint: 'forces checkpoints',
  pg_create_subscription: 'creates subscriptions (connections to other servers)',
  pg_use_reserved_connections: 'takes the connections reserved for administrators',
  pg_signal_autovacuum_worker: 'signals autovacuum workers',
};

/** Extensions whose functions reach outside the session's read-only transaction. */
const POSTGRES_RISKY_EXTENSIONS: Record<string, string> = {
  dblink: 'opens other connections, outside the read-only transaction (dblink_exec writes)',
  postgres_fdw: 'reaches other servers through foreign tables',
  file_fdw: "reads the server's files as tables",
  adminpack: "writes the server's files",
};

async function checkPostgres(
  rows: Rows,
  config: DatabaseConfig,
  reader: string,
): Promise<{ findings: AccountFinding[]; grantScript: string }> {
  const findings: AccountFinding[] = [];
  const [attributes] = await rows(
    'SELECT rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls FROM pg_roles WHERE rolname = current_user',
  );
  const [superuser, createRole, createDb, replication, bypassRls] = (attributes ?? []) as boolean[];
  if (superuser === true)
    findings.push({ kind: 'superuser', message: 'it is a superuser: it can do anything, the read-only session aside' });
  if (createRole === true)
    findings.push({ kind: 'create_role', message: 'it has CREATEROLE: it can create roles and grant itself more' });
  if (createDb === true)
    findings.push({ kind: 'create_database', message: 'it has CREATEDB: it can create databases' });
  if (replication === true)
    findings.push({ kind: 'replication', message: 'it has REPLICATION: it can stream every change of the server' });
  if (bypassRls === true)
    findings.push({ kind: 'bypass_rls', message: 'it has BYPASSRLS: row-level security does not apply to it' });

  const memberships = (
    await rows(
      `SELECT rolname FROM pg_roles WHERE rolname IN (${sqlList(Object.keys(POSTGRES_RISKY_ROLES))})
         AND pg_has_role(current_user, oid, 'MEMBER') ORDER BY rolname`,
    )
  ).map((row) => String(row[0]));
  for (const role of memberships) {
    findings.push({
      kind: 'role_membership',
      message: `it is a member of ${role}, which ${POSTGRES_RISKY_ROLES[role] ?? ''}`,
      objects: [role],
    });
  }

  const systemSchema =
    "n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'";
  const tables = (
    await rows(`
      SELECT format('%I.%I', n.nspname, c.relname) || ' (' || array_to_string(ARRAY(
               SELECT p FROM unnest(ARRAY['INSERT', 'UPDATE', 'DELETE', 'TRUNCATE', 'TRIGGER']) p
               WHERE has_table_privilege(c.oid, p)), ', ') || ')'
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND ${systemSchema}
        AND has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER')
      ORDER BY n.nspname, c.relname`)
  ).map((row) => String(row[0]));
  if (tables.length > 0) {
    findings.push({
      kind: 'table_write',
      message: `it may write ${tables.length} table${tables.length === 1 ? '' : 's'}: ${shown(tables)}`,
      objects: tables,
    });
  }
  const sequences = (
    await rows(`
      SELECT format('%I.%I', n.nspname, c.relname)
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE c.relkind = 'S' AND ${systemSchema}
        AND CASE WHEN c.relkind = 'S' THEN has_sequence_privilege(c.oid, 'UPDATE') ELSE false END
      ORDER BY 1`)
  ).map((row) => String(row[0]));
  if (sequences.length > 0) {
    findings.push({
      kind: 'sequence_write',
      message: `it may advance or set ${sequences.length} sequence${sequences.length === 1 ? '' : 's'} (UPDATE): ${shown(sequences)}`,
      objects: sequences,
    });
  }
  const schemas = (
    await rows(`
      SELECT n.nspname FROM pg_namespace n
      WHERE ${systemSchema} AND n.nspname NOT LIKE 'pg\\_%' AND has_schema_privilege(n.oid, 'CREATE')
      ORDER BY 1`)
  ).map((row) => String(row[0]));
  if (schemas.length > 0) {
    findings.push({
      kind: 'schema_create',
      message: `it may create tables and functions in schema${schemas.length === 1 ? '' : 's'} ${shown(schemas)}`,
      objects: schemas,
    });
  }
  const [[createSchema]] = (await rows("SELECT has_database_privilege(current_database(), 'CREATE')")) as [[boolean]];
  if (createSchema === true)
    findings.push({ kind: 'database_create', message: 'it may create schemas in the database (CREATE on it)' });
  // An installed extension matters when this account can use it: execute one of its functions
  // (dblink_exec), or use its foreign-data wrapper or one of that wrapper's servers.
  const extensions = (
    await rows(
      `SELECT e.extname, n.nspname,
         EXISTS (SELECT 1 FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
                 WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = e.oid
                   AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
                   AND has_function_privilege(p.oid, 'EXECUTE')
                   AND p.prorettype <> 'fdw_handler'::regtype AND p.proname NOT LIKE '%\\_validator')
         OR EXISTS (SELECT 1 FROM pg_foreign_data_wrapper w JOIN pg_depend d ON d.objid = w.oid
                    WHERE d.classid = 'pg_foreign_data_wrapper'::regclass AND d.refclassid = 'pg_extension'::regclass
                      AND d.refobjid = e.oid
                      AND (has_foreign_data_wrapper_privilege(w.oid, 'USAGE')
                           OR EXISTS (SELECT 1 FROM pg_foreign_server s
                                      WHERE s.srvfdw = w.oid AND has_server_privilege(s.oid, 'USAGE'))))
       FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
       WHERE e.extname IN (${sqlList(Object.keys(POSTGRES_RISKY_EXTENSIONS))}) ORDER BY 1`,
    )
  ).map((row) => ({ extension: String(row[0]), schema: String(row[1]), usable: row[2] === true }));
  for (const { extension, schema, usable } of extensions) {
    if (!usable) continue;
    findings.push({
      kind: 'extension',
      message: `the ${extension} extension is installed (schema ${schema}) and this account may use it: it ${POSTGRES_RISKY_EXTENSIONS[extension] ?? ''}`,
      objects: [extension],
    });
  }

  const [[database]] = (await rows('SELECT current_database()')) as [[string]];
  const userSchemas = (
    await rows(`
      SELECT n.nspname FROM pg_namespace n
      WHERE ${systemSchema} AND n.nspname NOT LIKE 'pg\\_%'
        AND EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p', 'v', 'm', 'f'))
      ORDER BY 1`)
  ).map((row) => String(row[0]));
  const role = quoteIdentifier(reader);
  const lines = [
    `-- A least-privilege read role for rho on database ${database ?? config.database ?? ''}; run as its owner or a superuser.`,
    `CREATE ROLE ${role} LOGIN PASSWORD '...' NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;`,
    `ALTER ROLE ${role} SET default_transaction_read_only = on;`,
    `GRANT CONNECT ON DATABASE ${quoteIdentifier(database ?? config.database ?? 'app')} TO ${role};`,
  ];
  for (const schema of userSchemas.length === 0 ? ['public'] : userSchemas) {
    const name = quoteIdentifier(schema);
    lines.push(
      `GRANT USAGE ON SCHEMA ${name} TO ${role};`,
      `GRANT SELECT ON ALL TABLES IN SCHEMA ${name} TO ${role};`,
      `ALTER DEFAULT PRIVILEGES IN SCHEMA ${name} GRANT SELECT ON TABLES TO ${role};`,
    );
    if (schema === 'public')
      lines.push('REVOKE CREATE ON SCHEMA "public" FROM PUBLIC;  -- PUBLIC had it before PostgreSQL 15');
  }
  for (const { extension } of extensions) {
    // PUBLIC may execute an extension's functions by default: take that away (the owner keeps them).
    lines.push(
      `-- ${extension} is installed: DROP EXTENSION ${extension}; if nothing needs it, else keep its functions from PUBLIC:`,
      `DO $$ DECLARE f regprocedure; BEGIN FOR f IN SELECT d.objid::regprocedure FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.refclassid = 'pg_extension'::regclass AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = '${extension}') AND d.deptype = 'e' LOOP EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', f); END LOOP; END $$;`,
    );
  }
  lines.push(`-- Then set user: ${reader} (and its password) for the alias in databases.yaml.`);
  return { findings, grantScript: `${lines.join('\n')}\n` };
}

/** MariaDB/MySQL privileges that only read. */
const MYSQL_READ_PRIVILEGES = new Set(['SELECT', 'SHOW VIEW', 'USAGE']);

/** Administrative privileges, and why each matters for a read-only agent. */
const MYSQL_ADMIN_PRIVILEGES: Record<string, string> = {
  SUPER: 'kills other sessions, changes global settings, writes despite read_only',
  PROCESS: "sees other sessions' statements (SHOW PROCESSLIST, INNODB_TRX)",
  FILE: "reads and writes the server's files (LOAD_FILE, INTO OUTFILE)",
  'ALL PRIVILEGES': 'includes every other one: writes, SUPER, FILE, PROCESS',
  SHUTDOWN: 'stops the server',
  RELOAD: 'flushes logs, caches and privileges',
  'CREATE USER': 'creates and changes accounts',
  'CONNECTION ADMIN': 'kills other sessions',
  'BINLOG ADMIN': 'purges the binary log',
  'BINLOG MONITOR': 'reads the binary log status',
  'BINLOG REPLAY': 'replays binary log events',
  'REPLICATION SLAVE': 'streams every change of the server',
  'REPLICATION CLIENT': 'reads replication status',
  'REPLICATION MASTER ADMIN': 'administers replication',
  'REPLICATION SLAVE ADMIN': 'administers replication',
  'SLAVE MONITOR': 'reads replication status',
  'READ_ONLY ADMIN': 'writes while the server is read_only',
  'FEDERATED ADMIN': 'creates connections to other servers',
  'SET USER': 'runs views and routines as other accounts',
  'SHOW DATABASES': 'lists every database of the server',
  EXECUTE: 'runs stored procedures and functions, which may write (SQL SECURITY DEFINER)',
  PROXY: 'acts as other accounts',
};

/** One `GRANT ... ON ... TO ...` line of SHOW GRANTS, read. */
interface MysqlGrant {
  privileges: string[];
  on: string;
  grantOption: boolean;
}

function parseMysqlGrant(line: string): MysqlGrant | { role: string } | undefined {
  // `GRANT role TO user`: a role granted to the account (no ON clause).
  const role = /^GRANT\s+(`(?:[^`]|``)+`|'[^']*'|\S+)\s+TO\s+/i.exec(line);
  if (role !== null && !/\sON\s/i.test(line)) return { role: role[1]! };
  const match = /^GRANT\s+(.+?)\s+ON\s+(.+?)\s+TO\s+.*?(\s+WITH\s+(?:.*\s)?GRANT\s+OPTION.*)?$/is.exec(line);
  if (match === null) return undefined;
  const privileges = match[1]!
    .split(/,(?![^(]*\))/)
    .map((privilege) =>
      privilege
        .trim()
        .replace(/\s*\(.*\)$/s, '')
        .toUpperCase(),
    )
    .filter((privilege) => privilege !== '');
  const grantOption = match[3] !== undefined || privileges.includes('GRANT OPTION');
  return { privileges: privileges.filter((privilege) => privilege !== 'GRANT OPTION'), on: match[2]!, grantOption };
}

async function checkMysql(
  rows: Rows,
  config: DatabaseConfig,
  reader: string,
): Promise<{ findings: AccountFinding[]; grantScript: string }> {
  const findings: AccountFinding[] = [];
  const grants: { from: string; grant: MysqlGrant }[] = [];
  const seenRoles = new Set<string>();
  const read = async (statement: string, from: string): Promise<void> => {
    for (const row of await rows(statement)) {
      const parsed = parseMysqlGrant(String(row[0] ?? ''));
      if (parsed === undefined) continue;
      if ('role' in parsed) {
        if (seenRoles.has(parsed.role)) continue;
        seenRoles.add(parsed.role);
        try {
          await read(`SHOW GRANTS FOR ${parsed.role}`, `role ${parsed.role}`);
        } catch (error) {
          findings.push({
            kind: 'role_unreadable',
            message: `it has role ${parsed.role}, whose privileges rho could not read (${(error as Error).message}); check them by hand`,
            objects: [parsed.role],
          });
        }
      } else grants.push({ from, grant: parsed });
    }
  };
  await read('SHOW GRANTS FOR CURRENT_USER()', 'the account');
  const via = (from: string): string => (from === 'the account' ? '' : ` (through ${from})`);
  for (const { from, grant } of grants) {
    const admin = grant.privileges.filter((privilege) => privilege in MYSQL_ADMIN_PRIVILEGES);
    for (const privilege of admin) {
      findings.push({
        kind: 'admin_privilege',
        message: `it has ${privilege} ON ${grant.on}${via(from)}, which ${MYSQL_ADMIN_PRIVILEGES[privilege]}`,
        objects: [privilege],
      });
    }
    const writes = grant.privileges.filter(
      (privilege) => !MYSQL_READ_PRIVILEGES.has(privilege) && !(privilege in MYSQL_ADMIN_PRIVILEGES),
    );
    if (writes.length > 0) {
      findings.push({
        kind: 'write_privilege',
        message: `it may write: ${writes.join(', ')} ON ${grant.on}${via(from)}`,
        objects: writes,
      });
    }
    if (grant.grantOption) {
      findings.push({
        kind: 'grant_option',
        message: `it has GRANT OPTION ON ${grant.on}${via(from)}: it can hand its privileges to other accounts`,
        objects: ['GRANT OPTION'],
      });
    }
  }
  const [[current]] = (await rows('SELECT DATABASE()')) as [[string | null]];
  const database = current ?? config.database ?? 'app';
  const account = `'${reader.replaceAll("'", "''")}'@'%'`;
  const grantScript = [
    `-- A least-privilege read account for rho on ${database}; run as an administrator.`,
    `CREATE USER ${account} IDENTIFIED BY '...';`,
    `GRANT SELECT, SHOW VIEW ON \`${database.replaceAll('`', '``')}\`.* TO ${account};`,
    '-- No SUPER, PROCESS, FILE, EXECUTE, GRANT OPTION or any write privilege.',
    `-- Then set user: ${reader} (and its password) for the alias in databases.yaml.`,
    '',
  ].join('\n');
  return { findings, grantScript };
}

async function checkSqliteFile(config: DatabaseConfig): Promise<AccountCheck> {
  const path = config.path ?? '';
  try {
    await access(path, constants.R_OK);
  } catch (error) {
    throw new ConfigError({
      code: 'account_check_connect',
      message: `cannot read SQLite database "${config.alias}" at ${path}: ${(error as Error).message}`,
      cause: error,
    });
  }
  const findings: AccountFinding[] = [];
  const writable = await access(path, constants.W_OK).then(
    () => true,
    () => false,
  );
  if (writable) {
    const root = process.getuid?.() === 0;
    findings.push({
      kind: 'file_writable',
      message: `the file is writable by this process${root ? ' (rho runs as root, which writes any file)' : ''}: rho opens it read-only, but only a file rho cannot write is a guarantee`,
      objects: [path],
    });
  }
  const quoted = `'${path.replaceAll("'", "'\\''")}'`;
  const grantScript = [
    '# Make the file read-only for the user rho runs as (root writes any file: run rho as another user).',
    `chmod a-w ${quoted}`,
    '',
  ].join('\n');
  return { alias: config.alias, type: 'sqlite', account: path, findings, grantScript };
}
