import type { SqlDialect } from '../../check-sql.js';

// Functions that change something (data, sequences, locks, settings, other sessions, files),
// read the server's file system, reach the network, run SQL given as a string, or stall the
// server. Matched case-insensitively against the function's own name (the last component of
// a qualified name), never against substrings of the statement.

const POSTGRES_NAMES = [
  'pg_terminate_backend',
  'pg_cancel_backend',
  'set_config',
  'pg_reload_conf',
  'pg_rotate_logfile',
  'pg_log_backend_memory_contexts',
  'pg_promote',
  'pg_switch_wal',
  'pg_switch_xlog',
  'pg_create_restore_point',
  'pg_start_backup',
  'pg_stop_backup',
  'pg_backup_start',
  'pg_backup_stop',
  'pg_import_system_collations',
  'pg_sleep',
  'pg_sleep_for',
  'pg_sleep_until',
  'pg_notify',
  'pg_export_snapshot',
  'pg_stat_file',
  'pg_current_logfile',
  'pg_truncate_visibility_map',
  'pg_prewarm',
  'nextval',
  'setval',
  'txid_current',
  'pg_current_xact_id',
  'txid_current_if_assigned',
  'lo_import',
  'lo_export',
  'lo_create',
  'lo_creat',
  'lo_unlink',
  'lo_open',
  'lo_write',
  'lowrite',
  'lo_put',
  'lo_truncate',
  'lo_truncate64',
  'lo_from_bytea',
  'lo_close',
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
  'pg_file_write',
  'pg_file_rename',
  'pg_file_unlink',
  'pg_file_sync',
  'pg_logdir_ls',
];
const POSTGRES_PREFIXES = [
  'pg_advisory_',
  'pg_try_advisory_',
  'pg_read_',
  'pg_ls_',
  'dblink',
  'pg_stat_reset',
  'pg_create_',
  'pg_drop_',
  'pg_replication_',
  'pg_logical_',
  'pg_wal_replay_',
  'pg_xlog_replay_',
  'pg_copy_',
];

// Vertica meta-functions are called with SELECT; these change the catalog, sessions, storage
// or settings, or write files.
const VERTICA_NAMES = [
  'close_session',
  'close_all_sessions',
  'close_user_sessions',
  'interrupt_statement',
  'cancel_refresh',
  'set_config_parameter',
  'clear_config_parameter',
  'alter_location_use',
  'shutdown',
  'do_tm_task',
  'purge',
  'purge_table',
  'purge_partition',
  'purge_projection',
  'drop_partition',
  'drop_partitions',
  'move_partitions_to_table',
  'copy_partitions_to_table',
  'copy_table',
  'swap_partitions_between_tables',
  'make_ahm_now',
  'set_ahm_epoch',
  'set_ahm_time',
  'start_refresh',
  'refresh',
  'analyze_statistics',
  'analyze_histogram',
  'analyze_external_row_count',
  'drop_statistics',
  'export_catalog',
  'export_tables',
  'export_objects',
  'export_statistics',
  'import_statistics',
  'rebalance_cluster',
  'start_rebalance_cluster',
  'clear_caches',
  'clear_data_collector',
  'flush_data_collector',
  'set_data_collector_policy',
  'set_data_collector_time_policy',
  'release_system_guarantee',
  'set_scaling_factor',
  'enable_local_segments',
  'hard_kill',
  'reset_session',
  'sleep',
  'set_optimizer_directives',
  'save_query_repository',
  'nextval',
  'setval',
  'currval',
  'set_config',
  'pg_sleep',
  'pg_terminate_backend',
  'pg_cancel_backend',
];

const MYSQL_NAMES = [
  'get_lock',
  'release_lock',
  'release_all_locks',
  'sleep',
  'benchmark',
  'load_file',
  'sys_exec',
  'sys_eval',
  'sys_set',
  'sys_get',
  'lib_mysqludf_sys_info',
  'master_pos_wait',
  'source_pos_wait',
  'wait_for_executed_gtid_set',
  'wait_until_sql_thread_after_gtids',
  'nextval',
  'setval',
  'lastval',
];

const SQLITE_NAMES = [
  'load_extension',
  'writefile',
  'readfile',
  'edit',
  'fsdir',
  'lsdir',
  'zipfile',
  'sqlar_uncompress',
  'eval',
  'fts3_tokenizer',
  'sqlite_dbpage',
  'fileio_read',
  'fileio_write',
  'fileio_ls',
  'fileio_mkdir',
  'fileio_symlink',
  'fileio_scan',
  'lines',
  'lines_read',
  'define',
  'define_free',
  'undefine',
  'sqlean_define',
  'shell',
  'system',
  'exec',
];

// Whole packages that reach the network, the file system, the scheduler, locks or other
// sessions; one call into any of them is refused.
const ORACLE_PACKAGE_PREFIXES = ['dbms_', 'utl_', 'owa_', 'apex_'];
const ORACLE_NAMES = ['htp', 'htf', 'httpuritype', 'dburitype', 'xdburitype', 'nextval', 'currval', 'sys_exec'];

// Read-only packages that match the prefixes above but are common in plain queries.
const ORACLE_HARMLESS_PACKAGES = new Set(['dbms_random', 'dbms_metadata', 'dbms_lob']);

// SQLite table-valued functions that can also be queried as tables without parentheses
// (`SELECT * FROM fsdir WHERE name = '/etc'`, arguments passed as hidden columns).
const SQLITE_TABLE_NAMES = new Set([
  'fsdir',
  'lsdir',
  'zipfile',
  'fileio_ls',
  'fileio_scan',
  'lines',
  'lines_read',
  'sqlite_dbpage',
]);

/** Whether a SQLite table name is a deny-listed table-valued function used as a table. */
export function isSideEffectTable(name: string): boolean {
  return SQLITE_TABLE_NAMES.has(name.toLowerCase());
}

function deniedBy(names: readonly string[], prefixes: readonly string[]): (name: string) => boolean {
  const exact = new Set(names);
  return (name) => exact.has(name) || prefixes.some((prefix) => name.startsWith(prefix));
}

const DENIED: Record<SqlDialect, (name: string) => boolean> = {
  postgres: deniedBy(POSTGRES_NAMES, POSTGRES_PREFIXES),
  vertica: deniedBy([...POSTGRES_NAMES, ...VERTICA_NAMES], POSTGRES_PREFIXES),
  mysql: deniedBy(MYSQL_NAMES, []),
  sqlite: deniedBy(SQLITE_NAMES, []),
  oracle: deniedBy(ORACLE_NAMES, ORACLE_PACKAGE_PREFIXES),
};

/**
 * Whether a call to `name` (possibly qualified, `schema.package.function`) is on the dialect's
 * deny list. For Oracle every component is checked, because the deny list names packages.
 */
export function isSideEffectFunction(dialect: SqlDialect, nameParts: readonly string[]): boolean {
  const parts = nameParts.map((part) => part.toLowerCase());
  const denied = DENIED[dialect];
  if (dialect === 'oracle') return parts.some((part) => !ORACLE_HARMLESS_PACKAGES.has(part) && denied(part));
  const last = parts[parts.length - 1];
  return last !== undefined && denied(last);
}
