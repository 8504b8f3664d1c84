import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { ConfigError, rhoHome } from '@rho/core';
import * as v from 'valibot';
import { createRequire } from 'node:module';

/** The database engines rho has a tool for; each is also the tool's name. */
export const DATABASE_TYPES = ['sqlite', 'postgres', 'mysql', 'oracle', 'vertica'] as const;

/** One of {@link DATABASE_TYPES}. */
export type DatabaseType = (typeof DATABASE_TYPES)[number];

/** One configured database alias, validated and with `${ENV}` references resolved. */
export interface DatabaseConfig {
  /** The name the model uses to pick this database (the key under `databases:`). */
  alias: string;
  /** Engine, and so the tool that serves this alias. */
  type: DatabaseType;
  /** SQLite: absolute path of the database file (it must exist; rho never creates one). */
  path?: string;
  /** Server host (postgres, mysql, vertica). Defaults to `localhost`. */
  host?: string;
  /** Server port. Defaults to 5432 (postgres), 3306 (mysql), 5433 (vertica). */
  port?: number;
  /** Database (postgres, vertica) or schema (mysql) to connect to. */
  database?: string;
  /** Account name. */
  user?: string;
  /** Account password. */
  password?: string;
  /** Oracle: Easy Connect string `host:port/service` or a TNS alias. */
  dsn?: string;
  /** Longest a single statement may run, in seconds (default 30). */
  statementTimeoutSeconds: number;
}

/** Where {@link loadDatabaseConfig} looks, and which environment it reads. */
export interface LoadDatabaseConfigOptions {
  /** An explicit file (the CLI's `--db-config`); it must exist. */
  path?: string;
  /** `$RHO_HOME`; defaults to `env.RHO_HOME`, then `~/.config/rho`. */
  rhoHome?: string;
  /**
   * Environment for `RHO_DB_CONFIG`, `RHO_HOME`, `RHO_AGENT_DB_CONFIG` and `${VAR}`
   * interpolation; defaults to `process.env`.
   */
  env?: Record<string, string | undefined>;
  /** The Python rho-agent's configuration folder, read when rho's own files are absent. Default `~/.config/rho-agent`. */
  rhoAgentHome?: string;
}

/** Where database aliases were read from. */
export type DatabaseConfigSource =
  'path' | 'RHO_DB_CONFIG' | 'rho_home' | 'RHO_AGENT_DB_CONFIG' | 'rho_agent_home' | 'none';

/** The aliases {@link resolveDatabaseConfig} read, where from, and what to tell the user. */
export interface ResolvedDatabaseConfig {
  /** The aliases (empty when no file was found). */
  databases: DatabaseConfig[];
  /** Which rule chose the file. */
  source: DatabaseConfigSource;
  /** The file read, if any. */
  file?: string;
  /**
   * A sentence for the user when the file is rho-agent's (`RHO_AGENT_DB_CONFIG` or
   * `~/.config/rho-agent/databases.yaml`), so they know where the aliases came from; a CLI prints
   * it once on stderr. Absent otherwise.
   */
  notice?: string;
}

/** Options of {@link parseDatabaseConfig}. */
export interface ParseDatabaseConfigOptions {
  /** Environment for `${VAR}` interpolation; defaults to `process.env`. */
  env?: Record<string, string | undefined>;
  /** File the mapping came from, named in error messages; relative SQLite paths resolve against its folder. */
  file?: string;
  /** Folder relative SQLite paths resolve against (default: the folder of `file`, else the process's cwd). */
  baseDir?: string;
}

const DEFAULT_STATEMENT_TIMEOUT_SECONDS = 30;

const optionalString = v.optional(v.union([v.string(), v.number()]));

const entrySchema = v.strictObject({
  type: v.pipe(
    v.string('needs a "type": one of sqlite, postgres, mysql, oracle, vertica'),
    v.transform((value) => value.toLowerCase()),
    v.picklist(
      DATABASE_TYPES,
      (issue) => `has unknown type "${String(issue.input)}": use one of ${DATABASE_TYPES.join(', ')}`,
    ),
  ),
  path: optionalString,
  host: optionalString,
  port: v.optional(
    v.pipe(
      v.union([v.number(), v.pipe(v.string(), v.regex(/^\d+$/, 'port must be a number'), v.transform(Number))]),
      v.integer('port must be a whole number'),
      v.minValue(1, 'port must be between 1 and 65535'),
      v.maxValue(65535, 'port must be between 1 and 65535'),
    ),
  ),
  database: optionalString,
  user: optionalString,
  password: optionalString,
  dsn: optionalString,
  statement_timeout: v.optional(
    v.pipe(
      v.union([v.number(), v.pipe(v.string(), v.transform(Number))]),
      v.number('statement_timeout must be a number of seconds'),
      v.minValue(0.001, 'statement_timeout must be a positive number of seconds'),
    ),
  ),
});

const REQUIRED_FIELDS: Record<DatabaseType, readonly string[]> = {
  sqlite: ['path'],
  postgres: ['database'],
  mysql: ['database'],
  oracle: ['dsn'],
  vertica: ['database'],
};

const UNSUPPORTED_FIELDS: Record<DatabaseType, readonly string[]> = {
  sqlite: ['host', 'port', 'user', 'password', 'database', 'dsn'],
  postgres: ['path', 'dsn'],
  mysql: ['path', 'dsn'],
  oracle: ['path', 'host', 'port', 'database'],
  vertica: ['path', 'dsn'],
};

const UNSUPPORTED_HINTS: Partial<Record<DatabaseType, string>> = {
  sqlite: 'SQLite only takes "path".',
  oracle: 'Oracle uses "dsn", which includes host:port/service.',
};

/**
 * Replaces `${VAR}` (and `${VAR:-default}`) in a string. An unset variable without a default is
 * an error naming the variable, so a missing password never silently becomes an empty one.
 */
function interpolate(
  value: string,
  env: Record<string, string | undefined>,
  where: string,
  file: string | undefined,
): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (_match, name: string, fallback: string | undefined) => {
      const found = env[name];
      if (found !== undefined) return found;
      if (fallback !== undefined) return fallback;
      throw new ConfigError({
        message: `${where} uses \${${name}}, but the environment variable ${name} is not set: set it, or write \${${name}:-default}.`,
        ...(file === undefined ? {} : { file }),
        field: where,
      });
    },
  );
}

function interpolateEntry(
  entry: Record<string, unknown>,
  env: Record<string, string | undefined>,
  alias: string,
  file: string | undefined,
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    result[key] = typeof value === 'string' ? interpolate(value, env, `databases.${alias}.${key}`, file) : value;
  }
  return result;
}

function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return path;
}

/**
 * Validates a `databases` mapping (alias → settings), as found in `databases.yaml` under
 * `databases:` or in an agent YAML, and resolves `${ENV}` references in every string value.
 *
 * @throws ConfigError naming the alias and field to fix.
 */
export function parseDatabaseConfig(mapping: unknown, options: ParseDatabaseConfigOptions = {}): DatabaseConfig[] {
  const env = options.env ?? process.env;
  const file = options.file;
  const baseDir = options.baseDir ?? (file === undefined ? process.cwd() : dirname(file));
  const inFile = file === undefined ? '' : ` in ${file}`;
  if (mapping === undefined || mapping === null) return [];
  if (typeof mapping !== 'object' || Array.isArray(mapping)) {
    throw new ConfigError({
      message: `"databases"${inFile} must be a mapping of alias to settings, for example:\ndatabases:\n  chinook:\n    type: sqlite\n    path: ./chinook.sqlite`,
      ...(file === undefined ? {} : { file }),
      field: 'databases',
    });
  }
  const configs: DatabaseConfig[] = [];
  for (const [alias, rawEntry] of Object.entries(mapping as Record<string, unknown>)) {
    const where = `Database "${alias}"${inFile}`;
    const fail = (message: string, field?: string): never => {
      throw new ConfigError({
        message: `${where} ${message}`,
        ...(file === undefined ? {} : { file }),
        field: field === undefined ? `databases.${alias}` : `databases.${alias}.${field}`,
      });
    };
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(alias)) fail('has an invalid alias: use 1-64 letters, digits, "_", "-" or ".".');
    if (rawEntry === null || typeof rawEntry !== 'object' || Array.isArray(rawEntry)) {
      fail('must be a mapping with at least a "type" field.');
    }
    const entry = interpolateEntry(rawEntry as Record<string, unknown>, env, alias, file);
    if (entry.type === undefined)
      fail('is missing the required "type" field: one of sqlite, postgres, mysql, oracle, vertica.', 'type');
    const parsed = v.safeParse(entrySchema, entry);
    if (!parsed.success) {
      const issue = parsed.issues[0];
      const key = issue?.path?.map((item) => String(item.key)).join('.');
      const problem =
        issue?.type === 'strict_object' || issue?.expected === 'never'
          ? `has an unknown field "${key}": allowed fields are type, path, host, port, database, user, password, dsn, statement_timeout.`
          : `${key === undefined ? '' : `field "${key}" `}${issue?.message ?? 'is invalid'}.`;
      fail(problem.replace(/\.\.$/, '.'), key);
    }
    const value = (parsed as v.SafeParseResult<typeof entrySchema> & { success: true }).output;
    const type = value.type;
    const asText = (field: unknown): string | undefined =>
      field === undefined || field === '' ? undefined : String(field);
    const fields: Record<string, unknown> = {
      path: asText(value.path),
      host: asText(value.host),
      port: value.port,
      database: asText(value.database),
      user: asText(value.user),
      password: asText(value.password),
      dsn: asText(value.dsn),
    };
    const missing = REQUIRED_FIELDS[type].filter((field) => fields[field] === undefined);
    if (missing.length > 0) fail(`(${type}) is missing required fields: ${missing.join(', ')}.`, missing[0]);
    const unsupported = UNSUPPORTED_FIELDS[type].filter((field) => fields[field] !== undefined);
    if (unsupported.length > 0) {
      fail(
        `(${type}) has unsupported fields: ${unsupported.join(', ')}. ${UNSUPPORTED_HINTS[type] ?? ''}`.trimEnd(),
        unsupported[0],
      );
    }
    const config: DatabaseConfig = {
      alias,
      type,
      statementTimeoutSeconds: value.statement_timeout ?? DEFAULT_STATEMENT_TIMEOUT_SECONDS,
    };
    if (type === 'sqlite') {
      const expanded = expandHome(String(fields.path));
      const absolute = isAbsolute(expanded) ? expanded : resolve(baseDir, expanded);
      if (!existsSync(absolute))
        fail(`(sqlite) path does not exist: ${absolute}. rho opens SQLite files but never creates them.`, 'path');
      config.path = absolute;
    }
    for (const field of ['host', 'database', 'user', 'password', 'dsn'] as const) {
      const text = fields[field];
      if (typeof text === 'string') config[field] = text;
    }
    if (typeof fields.port === 'number') config.port = fields.port;
    configs.push(config);
  }
  return configs;
}

/**
 * Reads database aliases from, in order: `options.path` (the CLI's `--db-config`), the file named
 * by `RHO_DB_CONFIG`, or `$RHO_HOME/databases.yaml` when it exists; when none of rho's own is
 * there, the Python rho-agent's: the file named by `RHO_AGENT_DB_CONFIG`, or
 * `~/.config/rho-agent/databases.yaml` when it exists. Returns an empty list when no file is
 * configured and no default one exists.
 *
 * @throws ConfigError when a named file is missing, is not YAML, or an entry is invalid.
 */
export async function loadDatabaseConfig(options: LoadDatabaseConfigOptions = {}): Promise<DatabaseConfig[]> {
  return (await resolveDatabaseConfig(options)).databases;
}

/**
 * {@link loadDatabaseConfig}, also saying which file was read and, for rho-agent's files, a
 * notice for the user (library code never prints: the caller shows it).
 */
export async function resolveDatabaseConfig(options: LoadDatabaseConfigOptions = {}): Promise<ResolvedDatabaseConfig> {
  const env = options.env ?? process.env;
  const set = (value: string | undefined): string | undefined =>
    value === undefined || value.trim() === '' ? undefined : value;
  const named = options.path ?? set(env.RHO_DB_CONFIG);
  // rho's own home ($RHO_HOME, else $XDG_CONFIG_HOME/rho, else ~/.config/rho), as core decides it.
  const ownDefault = join(expandHome(options.rhoHome ?? rhoHome(env)), 'databases.yaml');
  let file: string;
  let source: DatabaseConfigSource;
  const mustExist = (path: string, from: string): string => {
    const resolved = resolve(expandHome(path));
    if (!existsSync(resolved))
      throw new ConfigError({
        message: `Database config file not found: ${resolved} (from ${from}). Check the path.`,
        file: resolved,
      });
    return resolved;
  };
  if (named !== undefined) {
    source = options.path !== undefined ? 'path' : 'RHO_DB_CONFIG';
    file = mustExist(named, options.path !== undefined ? 'the given path' : 'RHO_DB_CONFIG');
  } else if (existsSync(ownDefault)) {
    source = 'rho_home';
    file = ownDefault;
  } else if (set(env.RHO_AGENT_DB_CONFIG) !== undefined) {
    source = 'RHO_AGENT_DB_CONFIG';
    file = mustExist(env.RHO_AGENT_DB_CONFIG!, 'RHO_AGENT_DB_CONFIG');
  } else {
    const agentDefault = join(
      expandHome(options.rhoAgentHome ?? join(homedir(), '.config', 'rho-agent')),
      'databases.yaml',
    );
    if (!existsSync(agentDefault)) return { databases: [], source: 'none' };
    source = 'rho_agent_home';
    file = agentDefault;
  }
  const fromRhoAgent = source === 'RHO_AGENT_DB_CONFIG' || source === 'rho_agent_home';
  let document: unknown;
  try {
    document = parseYaml(await readFile(file, 'utf8'));
  } catch (error) {
    throw new ConfigError({
      message: `Database config ${file} is not valid YAML: ${(error as Error).message}`,
      file,
      cause: error,
    });
  }
  const notice = fromRhoAgent
    ? `Using rho-agent's database aliases from ${file}${source === 'RHO_AGENT_DB_CONFIG' ? ' (RHO_AGENT_DB_CONFIG)' : ''}, as rho has none of its own (--db-config, RHO_DB_CONFIG, ${ownDefault}). Copy the file to ${ownDefault} to make it rho's.`
    : undefined;
  const found = (databases: DatabaseConfig[]): ResolvedDatabaseConfig => ({
    databases,
    source,
    file,
    ...(notice === undefined ? {} : { notice }),
  });
  if (document === null || document === undefined) return found([]);
  if (typeof document !== 'object' || Array.isArray(document) || !('databases' in document)) {
    throw new ConfigError({
      message: `Database config ${file} must have a top-level "databases:" mapping of alias to settings.`,
      file,
      field: 'databases',
    });
  }
  // rho-agent resolved relative SQLite paths against the current directory, rho against the file's folder.
  return found(
    parseDatabaseConfig((document as { databases: unknown }).databases, {
      env,
      file,
      ...(fromRhoAgent ? { baseDir: process.cwd() } : {}),
    }),
  );
}

/** The `yaml` package's parse, loaded on first use (starting a session without this file type loads nothing). */
function parseYaml(text: string): unknown {
  return (createRequire(import.meta.url)('yaml') as typeof import('yaml')).parse(text);
}
