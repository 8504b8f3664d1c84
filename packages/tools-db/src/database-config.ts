import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { ConfigError, rhoHome } from '@rho/core';
import {
  configProblem,
  configSource,
  parseConfigText,
  validateConfig,
  type ConfigPath,
  type ConfigSource,
} from '@rho/core/internal';
import * as v from 'valibot';

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
  /**
   * The document the mapping was read from (`readConfigFile`/`parseConfigText` of
   * `@rho/core/internal`): messages then give the line of each key. Its `file` is the file when
   * `file` is not given.
   */
  source?: Pick<ConfigSource, 'file' | 'lineOf'>;
  /** Where the mapping is in `source`; default `['databases']`. */
  at?: ConfigPath;
}

const DEFAULT_STATEMENT_TIMEOUT_SECONDS = 30;

const ENTRY_FIELDS = ['type', 'path', 'host', 'port', 'database', 'user', 'password', 'dsn', 'statement_timeout'];

const optionalString = v.optional(v.union([v.string(), v.number()], 'must be a string'));

const PORT = 'must be a whole number between 1 and 65535';
const SECONDS = 'must be a positive number of seconds';

const entrySchema = v.strictObject(
  {
    type: v.pipe(
      v.string(`must be one of ${DATABASE_TYPES.join(', ')}`),
      v.transform((value) => value.toLowerCase()),
      v.picklist(DATABASE_TYPES, `must be one of ${DATABASE_TYPES.join(', ')}`),
    ),
    path: optionalString,
    host: optionalString,
    port: v.optional(
      v.pipe(
        v.union([v.number(), v.pipe(v.string(), v.regex(/^\d+$/), v.transform(Number))], PORT),
        v.integer(PORT),
        v.minValue(1, PORT),
        v.maxValue(65535, PORT),
      ),
    ),
    database: optionalString,
    user: optionalString,
    password: optionalString,
    dsn: optionalString,
    statement_timeout: v.optional(
      v.pipe(
        v.union(
          [
            v.number(),
            v.pipe(
              v.string(),
              v.check((text) => text.trim() !== '' && Number.isFinite(Number(text))),
              v.transform(Number),
            ),
          ],
          SECONDS,
        ),
        v.number(SECONDS),
        v.minValue(0.001, SECONDS),
      ),
    ),
  },
  (issue) =>
    issue.expected === 'never'
      ? `is an unknown field; allowed fields are ${ENTRY_FIELDS.join(', ')}`
      : `is required: one of ${DATABASE_TYPES.join(', ')}`,
);

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
 * Replaces `${VAR}` (and `${VAR:-default}`) in the strings of an entry. An unset variable without
 * a default is an error naming the variable, so a missing password never silently becomes an empty one.
 */
function interpolateEntry(
  entry: Record<string, unknown>,
  env: Record<string, string | undefined>,
  source: Pick<ConfigSource, 'file' | 'lineOf'>,
  at: ConfigPath,
): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    result[key] =
      typeof value !== 'string'
        ? value
        : value.replace(
            /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
            (_match, name: string, fallback: string | undefined) => {
              const found = env[name];
              if (found !== undefined) return found;
              if (fallback !== undefined) return fallback;
              throw configProblem(
                source,
                [...at, key],
                `uses \${${name}}, but the environment variable ${name} is not set: set it, or write \${${name}:-default}`,
              );
            },
          );
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
 * @throws ConfigError `FILE:LINE: 'databases.ALIAS.FIELD' must be ... (got ...).`, naming the file
 * (when known), the key and its line (when `source` is given).
 */
export function parseDatabaseConfig(mapping: unknown, options: ParseDatabaseConfigOptions = {}): DatabaseConfig[] {
  const env = options.env ?? process.env;
  const file = options.file ?? options.source?.file;
  const source = options.source ?? configSource(mapping, file ?? 'Database config');
  const at = options.at ?? ['databases'];
  const baseDir = options.baseDir ?? (file === undefined ? process.cwd() : dirname(file));
  if (mapping === undefined || mapping === null) return [];
  if (!isMapping(mapping))
    throw configProblem(
      source,
      at,
      'must be a mapping of alias to settings, such as {chinook: {type: sqlite, path: ./chinook.sqlite}}',
      { value: mapping },
    );
  const configs: DatabaseConfig[] = [];
  for (const [alias, rawEntry] of Object.entries(mapping)) {
    const place = [...at, alias];
    const fail = (message: string, field?: string): never => {
      throw configProblem(source, field === undefined ? place : [...place, field], message);
    };
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(alias)) fail('is not a valid alias: use 1-64 letters, digits, "_", "-" or "."');
    if (!isMapping(rawEntry)) fail('must be a mapping with at least a "type" field');
    const entry = interpolateEntry(rawEntry as Record<string, unknown>, env, source, place);
    const value = validateConfig(entrySchema, entry, source, place);
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
    // Said without the values (a password is one of them).
    const missing = REQUIRED_FIELDS[type].filter((field) => fields[field] === undefined);
    if (missing.length > 0) fail(`(${type}) is missing required fields: ${missing.join(', ')}`);
    const unsupported = UNSUPPORTED_FIELDS[type].filter((field) => fields[field] !== undefined);
    if (unsupported.length > 0) {
      fail(
        `(${type}) has unsupported fields: ${unsupported.join(', ')}. ${UNSUPPORTED_HINTS[type] ?? ''}`
          .trimEnd()
          .replace(/\.$/, ''),
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
        fail(`(sqlite) path does not exist: ${absolute}. rho opens SQLite files but never creates them`, 'path');
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

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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
  // Not valid YAML: `FILE:LINE: not valid YAML: ...`.
  const config = parseConfigText(await readFile(file, 'utf8'), file);
  const document = config.value;
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
  if (!isMapping(document) || !('databases' in document))
    throw configProblem(config, [], 'must have a top-level "databases:" mapping of alias to settings');
  // rho-agent resolved relative SQLite paths against the current directory, rho against the file's folder.
  return found(
    parseDatabaseConfig(document.databases, {
      env,
      file,
      source: config,
      ...(fromRhoAgent ? { baseDir: process.cwd() } : {}),
    }),
  );
}
