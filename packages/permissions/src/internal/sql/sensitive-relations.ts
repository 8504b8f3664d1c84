// Catalog tables and views that expose credentials, other sessions' statements or the
// server's files. Refused in readonly whatever the account's privileges: a superuser account
// (a common misconfiguration) could otherwise read password hashes.

const POSTGRES_RELATIONS = new Map<string, string>([
  ['pg_authid', 'password hashes'],
  ['pg_shadow', 'password hashes'],
  ['pg_user_mapping', 'foreign-server passwords'],
  ['pg_user_mappings', 'foreign-server passwords'],
  ['pg_subscription', 'replication connection strings with passwords'],
  ['pg_hba_file_rules', "the server's pg_hba.conf"],
  ['pg_ident_file_mappings', "the server's pg_ident.conf"],
  ['pg_file_settings', "the server's configuration files"],
  ['pg_config', "the server's build and file paths"],
  ['pg_largeobject', 'large-object contents'],
  ['pg_statistic', 'raw column samples of tables the account may not read (use pg_stats)'],
  ['pg_stat_activity', "other sessions' statements"],
  ['pg_stat_statements', "other sessions' statements"],
  ['pg_stat_statements_info', "other sessions' statements"],
  ['pg_db_role_setting', "other roles' and databases' settings"],
  ['pg_locks', "other sessions' locks"],
  ['pg_prepared_xacts', "other sessions' prepared transactions"],
  ['pg_stat_replication', "other sessions' client addresses and replication state"],
  ['pg_stat_wal_receiver', "the replication connection's settings"],
  ['pg_stat_subscription', "other sessions' replication state"],
  ['pg_stat_ssl', "other sessions' client certificates"],
  ['pg_stat_gssapi', "other sessions' Kerberos principals"],
  ['pg_stat_progress_vacuum', "other sessions' maintenance work"],
  ['pg_stat_progress_analyze', "other sessions' maintenance work"],
  ['pg_stat_progress_create_index', "other sessions' maintenance work"],
  ['pg_stat_progress_cluster', "other sessions' maintenance work"],
  ['pg_stat_progress_copy', "other sessions' maintenance work"],
  ['pg_stat_progress_basebackup', "other sessions' maintenance work"],
  ['pg_stat_monitor', "other sessions' statements"],
  ['pg_stat_kcache', "other sessions' statements"],
]);

const MYSQL_SCHEMAS = new Map<string, string>([
  ['mysql', 'accounts, password hashes and server settings'],
  ['performance_schema', "other sessions' statements"],
  ['sys', "other sessions' statements"],
]);

const MYSQL_TABLES = new Map<string, string>([
  ['information_schema.processlist', "other sessions' statements"],
  ['information_schema.innodb_trx', "other sessions' statements (trx_query)"],
  ['information_schema.innodb_locks', "other sessions' locked rows"],
  ['information_schema.innodb_lock_waits', "other sessions' lock waits"],
  ['information_schema.metadata_lock_info', "other sessions' locks"],
  ['information_schema.query_cache_info', "other sessions' statements (the query cache)"],
  ['information_schema.user_statistics', "other accounts' activity"],
  ['information_schema.client_statistics', "other clients' activity"],
  ['information_schema.thread_pool_queues', "other sessions' connections"],
]);

/** Why a PostgreSQL relation may not be read, or undefined. Matched on the relation's own name in any schema. */
export function sensitivePostgresRelation(name: string): string | undefined {
  return POSTGRES_RELATIONS.get(name.toLowerCase());
}

/** Why a MySQL/MariaDB table may not be read, or undefined. `database` is the schema the name resolves in. */
export function sensitiveMysqlTable(database: string | undefined, table: string): string | undefined {
  const schema = (database ?? '').toLowerCase();
  return MYSQL_SCHEMAS.get(schema) ?? MYSQL_TABLES.get(`${schema}.${table.toLowerCase()}`);
}
