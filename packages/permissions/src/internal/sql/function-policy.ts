import { BUILTIN_NON_VOLATILE, BUILTIN_VOLATILE } from './postgres-builtin-functions.js';
import { isSideEffectFunction } from './side-effect-functions.js';

// Functions are allowed by an allowlist, not refused by a deny list: a call is allowed only
// when the function is known to be harmless. On PostgreSQL "known" comes from the server's own
// catalog (pg_proc, read once per connection by @rho/tools-db): immutable or stable functions,
// plus a few harmless volatile ones. On MySQL/MariaDB and SQLite it is a list of read-only
// built-ins. Whatever the catalog says, the refused classes below (SQL given as text, other
// connections, files, large objects, replication, locks, sessions, settings) are refused.

/** One row of a server's function catalog, as a driver reads it. */
export interface SqlFunctionRow {
  /** Schema (namespace) of the function. */
  schema: string;
  /** The function's name, exactly as stored (PostgreSQL folds unquoted names to lower case). */
  name: string;
  /** `i` immutable, `s` stable, `v` volatile (PostgreSQL's provolatile). */
  volatility: 'i' | 's' | 'v';
  /** Implementation language (`internal`, `c`, `sql`, `plpgsql`, `plpython3u`, ...). */
  language: string;
  /** Whether the language is trusted (`pg_language.lanpltrusted`); internal and c count as trusted. */
  trusted: boolean;
  /** PostgreSQL: the function's oid (operators, casts and views refer to functions by oid). */
  oid?: number;
  /**
   * PostgreSQL: where the function comes from. `builtin` (pg_catalog) and `extension` (a member
   * of an installed extension) are judged by their volatility label; a `user` function (anything
   * else) runs only when the profile names it (`database_functions`), whatever its label says.
   * Absent: judged by the label, as a catalog without this field always was.
   */
  origin?: 'builtin' | 'extension' | 'user';
  /** PostgreSQL `user` functions: the body (prosrc, or the SQL-standard body), scanned for refused calls. */
  body?: string;
}

/** What rho read about a database server at connection time; the SQL policy decides with it. */
export interface SqlServerContext {
  /**
   * The server's functions (PostgreSQL: pg_proc). Without it PostgreSQL is judged against the
   * pg_catalog functions of PostgreSQL 15 that ship with rho, so user-defined functions are
   * unknown and refused.
   */
  functions?: SqlFunctionCatalog;
  /** PostgreSQL `standard_conforming_strings`; unknown means either reading must agree. */
  standardConformingStrings?: boolean;
  /** MySQL/MariaDB `@@sql_mode` of the session; unknown means every mode's reading must agree. */
  sqlMode?: string;
  /** MySQL/MariaDB current database (unqualified table names resolve there). */
  database?: string;
  /**
   * PostgreSQL: the operators, casts, domains and relations (views, foreign tables, tables with
   * row-level security policies) whose functions the policy must judge, read with `functions`.
   */
  objects?: PostgresObjects;
  /**
   * PostgreSQL: user-defined functions the profile allows by name (`database_functions`), as
   * `name` (any schema) or `schema.name`, exactly as stored (unquoted names are lower case).
   */
  allowedFunctions?: readonly string[];
}

/** An operator (pg_operator) and the functions that may run for it. */
export interface PostgresOperatorRow {
  oid: number;
  schema: string;
  name: string;
  /** Its function (oprcode), and those of its commutator and negator, which the planner may use instead. */
  functions: readonly number[];
}

/** A cast (pg_cast) with a function, or a domain with CHECK constraints. */
export interface PostgresTypeRow {
  /** The target type (cast) or the domain. */
  schema: string;
  name: string;
  /** `cast` with its context (`i` implicit, `a` assignment, `e` explicit), or `domain`. */
  kind: 'cast' | 'domain';
  context?: 'i' | 'a' | 'e';
  /** For a cast: the source type, for messages. */
  source?: string;
  /** For a cast: its function. */
  functions: readonly number[];
  /**
   * For a domain: its CHECK constraints (and its base domains'), as one query the server
   * printed, `SELECT (check), ...` (pg_get_expr), judged like the statement.
   */
  definition?: string;
}

/** A relation whose reading runs something: a view's query, a foreign table, row-level security policies. */
export interface PostgresRelationRow {
  oid: number;
  schema: string;
  name: string;
  /** pg_class.relkind: `v` view, `f` foreign table, `r`/`p` table with policies; `F` a table with a foreign partition or child. */
  kind: string;
  /**
   * What reading it runs, as a query the server printed: a view's definition
   * (pg_get_viewdef), or `SELECT (policy), ...` for the row-level security policies that
   * apply to reads (pg_get_expr). Judged like the statement, views inside it expanded in turn.
   */
  definition?: string;
}

/** What the PostgreSQL driver reads besides the functions, indexed for the policy. */
export interface PostgresObjects {
  readonly operatorsByName: ReadonlyMap<string, readonly PostgresOperatorRow[]>;
  readonly operatorsByOid: ReadonlyMap<number, PostgresOperatorRow>;
  readonly typesByName: ReadonlyMap<string, readonly PostgresTypeRow[]>;
  readonly relationsByName: ReadonlyMap<string, readonly PostgresRelationRow[]>;
  readonly relationsByOid: ReadonlyMap<number, PostgresRelationRow>;
}

/** Indexes what the PostgreSQL driver read about operators, casts, domains and relations. */
export function buildPostgresObjects(
  operators: readonly PostgresOperatorRow[],
  types: readonly PostgresTypeRow[],
  relations: readonly PostgresRelationRow[],
): PostgresObjects {
  const group = <T extends { name: string }>(rows: readonly T[]): Map<string, T[]> => {
    const map = new Map<string, T[]>();
    for (const row of rows) {
      const list = map.get(row.name);
      if (list === undefined) map.set(row.name, [row]);
      else list.push(row);
    }
    return map;
  };
  return {
    operatorsByName: group(operators),
    operatorsByOid: new Map(operators.map((row) => [row.oid, row])),
    typesByName: group(types),
    relationsByName: group(relations),
    relationsByOid: new Map(relations.map((row) => [row.oid, row])),
  };
}

/** A function catalog indexed for the policy; build it once per connection with `buildFunctionCatalog`. */
export interface SqlFunctionCatalog {
  /** Schemas searched for an unqualified name, in order (PostgreSQL `current_schemas(true)`). */
  readonly searchPath: readonly string[];
  /** Rows by function name. */
  readonly byName: ReadonlyMap<string, readonly SqlFunctionRow[]>;
  /** Rows by oid (PostgreSQL, when the rows carry one). */
  readonly byOid: ReadonlyMap<number, SqlFunctionRow>;
}

/** Indexes the rows a driver read from the server's catalog. */
export function buildFunctionCatalog(
  rows: readonly SqlFunctionRow[],
  searchPath: readonly string[],
): SqlFunctionCatalog {
  const byName = new Map<string, SqlFunctionRow[]>();
  const byOid = new Map<number, SqlFunctionRow>();
  for (const row of rows) {
    const list = byName.get(row.name);
    if (list === undefined) byName.set(row.name, [row]);
    else list.push(row);
    if (row.oid !== undefined) byOid.set(row.oid, row);
  }
  // pg_catalog is always searched first when the path does not name it.
  const path = searchPath.includes('pg_catalog') ? [...searchPath] : ['pg_catalog', ...searchPath];
  return { searchPath: path, byName, byOid };
}

let builtinPostgres: SqlFunctionCatalog | undefined;

/** PostgreSQL's own pg_catalog functions (as shipped with rho), for checks without a live catalog. */
export function builtinPostgresCatalog(): SqlFunctionCatalog {
  if (builtinPostgres !== undefined) return builtinPostgres;
  const rows: SqlFunctionRow[] = [];
  const add = (names: string, volatility: 'i' | 'v'): void => {
    for (const name of names.split(' ')) {
      if (name !== '') rows.push({ schema: 'pg_catalog', name, volatility, language: 'internal', trusted: true });
    }
  };
  add(BUILTIN_NON_VOLATILE, 'i');
  add(BUILTIN_VOLATILE, 'v');
  builtinPostgres = buildFunctionCatalog(rows, ['pg_catalog', 'public']);
  return builtinPostgres;
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL (and Vertica): classes refused whatever the catalog says.

const POSTGRES_REFUSED_CLASSES: { why: string; names: readonly string[]; prefixes: readonly string[] }[] = [
  {
    why: 'it runs SQL given as text, which this check cannot see',
    names: [
      'query_to_xml',
      'query_to_xmlschema',
      'query_to_xml_and_xmlschema',
      'cursor_to_xml',
      'cursor_to_xmlschema',
      'table_to_xml',
      'table_to_xmlschema',
      'table_to_xml_and_xmlschema',
      'schema_to_xml',
      'schema_to_xmlschema',
      'schema_to_xml_and_xmlschema',
      'database_to_xml',
      'database_to_xmlschema',
      'database_to_xml_and_xmlschema',
      'ts_stat',
      'ts_rewrite',
      'connectby',
      'xpath_table',
    ],
    prefixes: ['crosstab'],
  },
  {
    why: 'it opens a connection to a server (dblink, postgres_fdw)',
    names: [
      'postgres_fdw_handler',
      'postgres_fdw_validator',
      'postgres_fdw_get_connections',
      'postgres_fdw_disconnect',
      'postgres_fdw_disconnect_all',
    ],
    prefixes: ['dblink', 'postgres_fdw'],
  },
  {
    why: "it reads or writes the server's files or large objects",
    names: [
      'pg_stat_file',
      'pg_current_logfile',
      'pg_file_write',
      'pg_file_rename',
      'pg_file_unlink',
      'pg_file_sync',
      'pg_logdir_ls',
      'loread',
      'lowrite',
      'pg_relation_filepath',
      'pg_filenode_relation',
      'pg_tablespace_location',
      'pg_import_system_collations',
    ],
    prefixes: ['pg_read_', 'pg_ls_', 'lo_', 'pg_file_'],
  },
  {
    why: 'it manages replication, backups or the write-ahead log',
    names: [
      'pg_promote',
      'pg_switch_wal',
      'pg_switch_xlog',
      'pg_create_restore_point',
      'pg_start_backup',
      'pg_stop_backup',
      'pg_backup_start',
      'pg_backup_stop',
      'pg_export_snapshot',
      'pg_log_standby_snapshot',
    ],
    prefixes: [
      'pg_create_',
      'pg_drop_',
      'pg_replication_',
      'pg_logical_',
      'pg_wal_replay_',
      'pg_xlog_replay_',
      'pg_copy_',
    ],
  },
  {
    why: 'it takes or releases locks',
    names: [],
    prefixes: ['pg_advisory_', 'pg_try_advisory_'],
  },
  {
    why: 'it acts on or shows other sessions (their queries may hold secrets)',
    names: [
      'pg_terminate_backend',
      'pg_cancel_backend',
      'pg_signal_backend',
      'pg_log_backend_memory_contexts',
      'pg_stat_get_activity',
      'pg_stat_get_backend_activity',
    ],
    prefixes: ['pg_stat_statements', 'pg_stat_reset'],
  },
  {
    why: 'it sends a notification to the sessions listening on the channel',
    names: ['pg_notify'],
    prefixes: [],
  },
  {
    why: 'it stalls the server: it holds a connection and a snapshot for as long as it is asked to',
    names: ['pg_sleep', 'pg_sleep_for', 'pg_sleep_until'],
    prefixes: [],
  },
  {
    why: 'it changes settings or server state',
    names: [
      'set_config',
      'pg_reload_conf',
      'pg_rotate_logfile',
      'pg_truncate_visibility_map',
      'pg_prewarm',
      'setseed',
      'nextval',
      'setval',
      'txid_current',
      'pg_current_xact_id',
      'txid_current_if_assigned',
      'pg_current_xact_id_if_assigned',
    ],
    prefixes: [],
  },
];

// Volatile pg_catalog functions that change nothing and reach nothing outside the query.
const POSTGRES_HARMLESS_VOLATILE = new Set([
  'random',
  'random_normal',
  'gen_random_uuid',
  'clock_timestamp',
  'timeofday',
  'statement_timestamp',
  'transaction_timestamp',
  'pg_total_relation_size',
  'pg_relation_size',
  'pg_table_size',
  'pg_indexes_size',
  'pg_database_size',
  'pg_tablespace_size',
  'pg_column_size',
  'pg_blocking_pids',
  'pg_safe_snapshot_blocking_pids',
  'pg_isolation_test_session_is_blocked',
  'pg_notification_queue_usage',
  'uuid_generate_v4',
  'uuid_generate_v1mc',
]);

// Extension functions outside pg_catalog that are also harmless though volatile.
const POSTGRES_HARMLESS_VOLATILE_ANY_SCHEMA = new Set([
  'uuid_generate_v4',
  'uuid_generate_v1mc',
  'gen_random_uuid',
  'gen_random_bytes',
]);

function refusedClass(lower: string): string | undefined {
  for (const entry of POSTGRES_REFUSED_CLASSES) {
    if (entry.names.includes(lower) || entry.prefixes.some((prefix) => lower.startsWith(prefix))) return entry.why;
  }
  return undefined;
}

/** Why a function may not be called, or undefined when it may. */
export interface FunctionRefusal {
  rule: 'sql.side-effect-function' | 'sql.unknown-function' | 'sql.volatile-function' | 'sql.user-function';
  why: string;
}

// What a function the profile trusts by name must still not call where its body shows it: other
// connections, signals to other sessions, server files. Refused whatever wraps them.
const REACH_PREFIXES = ['dblink', 'postgres_fdw'];
const REACH_NAMES = new Set([
  'pg_terminate_backend',
  'pg_cancel_backend',
  'pg_signal_backend',
  'pg_reload_conf',
  'pg_rotate_logfile',
  'pg_log_backend_memory_contexts',
  'pg_promote',
  'lo_export',
  'lo_import',
  'pg_file_write',
  'pg_file_rename',
  'pg_file_unlink',
]);
const reaches = (word: string): boolean =>
  REACH_NAMES.has(word) || REACH_PREFIXES.some((prefix) => word.startsWith(prefix));

const VOLATILITY_NAMES = { i: 'IMMUTABLE', s: 'STABLE', v: 'VOLATILE' } as const;

/** Whether the profile's `database_functions` names this function (`name` or `schema.name`). */
function allowedByProfile(row: SqlFunctionRow, allowed: readonly string[] | undefined): boolean {
  return allowed !== undefined && (allowed.includes(row.name) || allowed.includes(`${row.schema}.${row.name}`));
}

// The refused call a user function's body shows, followed through the user functions it names.
const bodyReachCache = new WeakMap<SqlFunctionRow, string | null>();
function bodyReach(row: SqlFunctionRow, catalog: SqlFunctionCatalog, seen = new Set<SqlFunctionRow>()): string | null {
  const known = bodyReachCache.get(row);
  if (known !== undefined) return known;
  if (seen.has(row)) return null;
  seen.add(row);
  let found: string | null = null;
  for (const word of new Set((row.body ?? '').toLowerCase().match(/[a-z_][a-z0-9_$]*/g) ?? [])) {
    if (reaches(word)) {
      found = word;
      break;
    }
    for (const callee of catalog.byName.get(word) ?? []) {
      if (callee.origin !== 'user' || callee === row) continue;
      const deeper = bodyReach(callee, catalog, seen);
      if (deeper !== null) {
        found = `${deeper} (through ${callee.schema}.${callee.name})`;
        break;
      }
    }
    if (found !== null) break;
  }
  bodyReachCache.set(row, found);
  return found;
}

/**
 * Judges one PostgreSQL function (a row of the catalog): the refused classes by name; a
 * user-defined function only when the profile names it (and its body shows no refused call);
 * built-in and extension functions by their volatility label and language.
 */
export function judgePostgresRow(
  row: SqlFunctionRow,
  catalog: SqlFunctionCatalog,
  allowed: readonly string[] | undefined,
): FunctionRefusal | undefined {
  const refused = refusedClass(row.name.toLowerCase());
  if (refused !== undefined) return { rule: 'sql.side-effect-function', why: refused };
  if (row.origin === 'user') {
    if (!allowedByProfile(row, allowed)) {
      return {
        rule: 'sql.user-function',
        why: `${row.schema}.${row.name} is a user-defined function (LANGUAGE ${row.language}, declared ${VOLATILITY_NAMES[row.volatility]}), and a label does not show what its body calls; user-defined functions run only when the profile names them (database_functions: [${row.schema}.${row.name}])`,
      };
    }
    const reach = bodyReach(row, catalog);
    if (reach !== null) {
      return {
        rule: 'sql.side-effect-function',
        why: `${row.schema}.${row.name} is allowed by the profile, but its body calls ${reach}, which reaches other connections, other sessions or server files; that is refused whatever wraps it`,
      };
    }
    return undefined;
  }
  if (row.volatility === 'v') {
    const harmless =
      row.schema === 'pg_catalog'
        ? POSTGRES_HARMLESS_VOLATILE.has(row.name)
        : POSTGRES_HARMLESS_VOLATILE_ANY_SCHEMA.has(row.name);
    if (!harmless)
      return {
        rule: 'sql.volatile-function',
        why: 'it is declared VOLATILE (it may change something), and it is not on the list of harmless volatile functions',
      };
  }
  if (!row.trusted && !['internal', 'c', 'sql', 'plpgsql'].includes(row.language)) {
    return {
      rule: 'sql.volatile-function',
      why: `it is written in the untrusted language ${row.language}, which can do anything whatever its declared volatility`,
    };
  }
  return undefined;
}

/** Judges one PostgreSQL function call by its (possibly qualified) name: every overload it may resolve to. */
export function judgePostgresFunction(
  nameParts: readonly string[],
  catalog: SqlFunctionCatalog,
  allowed?: readonly string[],
): FunctionRefusal | undefined {
  const name = nameParts[nameParts.length - 1] ?? '';
  const lower = name.toLowerCase();
  const refused = refusedClass(lower);
  if (refused !== undefined) return { rule: 'sql.side-effect-function', why: refused };
  if (nameParts.length > 2)
    return { rule: 'sql.unknown-function', why: 'a function in another database cannot be called' };
  const schema = nameParts.length === 2 ? nameParts[0] : undefined;
  const rows = (catalog.byName.get(name) ?? []).filter((row) =>
    schema === undefined ? catalog.searchPath.includes(row.schema) : row.schema === schema,
  );
  if (rows.length === 0) {
    return {
      rule: 'sql.unknown-function',
      why: "it is not a function of this database's catalog that rho knows to be harmless",
    };
  }
  for (const row of rows) {
    const refusal = judgePostgresRow(row, catalog, allowed);
    if (refusal !== undefined) return refusal;
  }
  return undefined;
}

/** Judges a Vertica call: the refused classes, the Vertica deny list, and VOLATILE user functions. */
export function judgeVerticaFunction(
  nameParts: readonly string[],
  catalog: SqlFunctionCatalog | undefined,
): FunctionRefusal | undefined {
  const name = nameParts[nameParts.length - 1] ?? '';
  const refused = refusedClass(name.toLowerCase());
  if (refused !== undefined) return { rule: 'sql.side-effect-function', why: refused };
  if (isSideEffectFunction('vertica', nameParts))
    return {
      rule: 'sql.side-effect-function',
      why: 'it changes sessions, settings, storage or statistics, or writes files',
    };
  // v_catalog.user_functions, when read: a user-defined function must not be volatile.
  const rows = catalog?.byName.get(name.toLowerCase()) ?? [];
  if (rows.some((row) => row.volatility === 'v'))
    return { rule: 'sql.volatile-function', why: 'it is a user-defined VOLATILE function' };
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// MySQL/MariaDB: read-only built-ins. Anything else (stored functions, UDFs, SLEEP, LOAD_FILE,
// GET_LOCK, BENCHMARK, ...) is refused. MariaDB does not enforce a stored function's declared
// READS SQL DATA, so stored functions are unknown too.

const MYSQL_ALLOWED = new Set(
  `
  ascii bin bit_length char char_length character_length chr concat concat_ws elt export_set field find_in_set format
  from_base64 hex insert instr lcase left length lengthb locate lower lpad ltrim make_set mid natural_sort_key oct
  octet_length ord position quote regexp_instr regexp_replace regexp_substr repeat replace reverse right rpad rtrim
  soundex space strcmp substr substring substring_index to_base64 to_char trim ucase unhex upper weight_string sformat
  crc32 crc32c format_bytes format_pico_time bit_count
  abs acos asin atan atan2 ceil ceiling conv cos cot degrees exp floor greatest least ln log log10 log2 mod pi pow power
  radians rand round sign sin sqrt tan truncate
  adddate addtime convert_tz curdate current_date current_time current_timestamp curtime date date_add date_format
  date_sub datediff day dayname dayofmonth dayofweek dayofyear extract from_days from_unixtime get_format hour last_day
  localtime localtimestamp makedate maketime microsecond minute month monthname now period_add period_diff quarter
  sec_to_time second str_to_date subdate subtime sysdate time time_format time_to_sec timediff timestamp timestampadd
  timestampdiff to_days to_seconds unix_timestamp utc_date utc_time utc_timestamp week weekday weekofyear year yearweek
  add_months months_between
  exists if ifnull nullif coalesce isnull interval nvl nvl2 decode_oracle cast convert binary
  json_array json_array_append json_array_insert json_arrayagg json_compact json_contains json_contains_path json_depth
  json_detailed json_equals json_exists json_extract json_insert json_keys json_length json_loose json_merge
  json_merge_patch json_merge_preserve json_normalize json_object json_objectagg json_overlaps json_pretty json_query
  json_quote json_remove json_replace json_search json_set json_table json_type json_unquote json_valid json_value
  json_array_intersect json_object_filter_keys json_object_to_array json_key_value
  avg bit_and bit_or bit_xor count group_concat max min std stddev stddev_pop stddev_samp sum var_pop var_samp variance
  percentile_cont percentile_disc median
  row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
  charset coercibility collation connection_id current_role current_user database schema found_rows last_insert_id
  row_count session_user system_user user version
  uuid uuid_short uuid_v4 uuid_v7 sys_guid inet_aton inet_ntoa inet6_aton inet6_ntoa is_ipv4 is_ipv6 is_ipv4_compat is_ipv4_mapped
  md5 sha sha1 sha2 compress uncompress uncompressed_length aes_encrypt aes_decrypt random_bytes default name_const
  column_json column_get column_list column_exists column_check column_create column_add column_delete
  point linestring polygon multipoint multilinestring multipolygon geometrycollection
  `
    .split(/\s+/)
    .filter((name) => name !== ''),
);
// Geometry functions (ST_*, MBR*) are pure computations.
const MYSQL_ALLOWED_PREFIXES = ['st_', 'mbr'];

/** Judges one MySQL/MariaDB function call. */
export function judgeMysqlFunction(nameParts: readonly string[]): FunctionRefusal | undefined {
  const lower = (nameParts[nameParts.length - 1] ?? '').toLowerCase();
  if (isSideEffectFunction('mysql', nameParts)) {
    return {
      rule: 'sql.side-effect-function',
      why: 'it takes locks, reads server files, stalls the server or changes sequences',
    };
  }
  if (nameParts.length > 1)
    return {
      rule: 'sql.unknown-function',
      why: 'it is a stored function; only read-only built-in functions may be called',
    };
  if (MYSQL_ALLOWED.has(lower) || MYSQL_ALLOWED_PREFIXES.some((prefix) => lower.startsWith(prefix))) return undefined;
  return {
    rule: 'sql.unknown-function',
    why: 'it is not one of the read-only built-in functions rho knows (stored functions and UDFs are refused)',
  };
}

// ---------------------------------------------------------------------------------------------
// SQLite: the core, date, math, JSON, aggregate, window and FTS functions.

const SQLITE_ALLOWED = new Set(
  `
  abs char coalesce concat concat_ws format glob hex ifnull iif instr last_insert_rowid changes total_changes length like
  likelihood likely lower ltrim max min nullif octet_length printf quote random randomblob replace round rtrim sign
  soundex sqlite_compileoption_get sqlite_compileoption_used sqlite_offset sqlite_source_id sqlite_version substr
  substring trim typeof unhex unicode unlikely upper zeroblob cast
  date time datetime julianday unixepoch strftime timediff
  avg count group_concat string_agg sum total
  row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
  acos acosh asin asinh atan atan2 atanh ceil ceiling cos cosh degrees exp floor ln log log10 log2 mod pi pow power
  radians sin sinh sqrt tan tanh trunc
  json jsonb json_array jsonb_array json_array_length json_error_position json_extract jsonb_extract json_insert
  jsonb_insert json_object jsonb_object json_patch jsonb_patch json_pretty json_remove jsonb_remove json_replace
  jsonb_replace json_set jsonb_set json_type json_valid json_quote json_group_array jsonb_group_array json_group_object
  jsonb_group_object json_each jsonb_each json_tree jsonb_tree
  highlight snippet bm25 matchinfo offsets generate_series
  `
    .split(/\s+/)
    .filter((name) => name !== ''),
);

/** Judges one SQLite function call (`pragma_*` table-valued functions exist only for pragmas without side effects). */
export function judgeSqliteFunction(nameParts: readonly string[]): FunctionRefusal | undefined {
  const lower = (nameParts[nameParts.length - 1] ?? '').toLowerCase();
  if (isSideEffectFunction('sqlite', nameParts)) {
    return {
      rule: 'sql.side-effect-function',
      why: 'it reads or writes files, loads code or evaluates SQL given as text',
    };
  }
  if (SQLITE_ALLOWED.has(lower) || lower.startsWith('pragma_')) return undefined;
  return {
    rule: 'sql.unknown-function',
    why: 'it is not one of the read-only built-in functions rho knows (application and extension functions are refused)',
  };
}
