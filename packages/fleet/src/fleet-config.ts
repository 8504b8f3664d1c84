import { ConfigError } from '@rho/core';
import { configProblem, configSource, validateConfig, type ConfigSource } from '@rho/core/internal';
import type { GenericSchema, InferOutput } from 'valibot';
import * as v from 'valibot';

/**
 * TLS settings passed through to postgres.js (`ssl`): `true` or a mode (`require`, `prefer`,
 * `verify-full`, `allow`), or Node `tls.connect` options (`ca`, `cert`, `key` as PEM text,
 * `rejectUnauthorized`, `servername`). `sslmode=` in the url works too.
 */
export type FleetTls =
  | boolean
  | 'require'
  | 'prefer'
  | 'allow'
  | 'verify-full'
  | {
      /** PEM text of the certificate authority to trust. */
      ca?: string;
      /** PEM text of the client certificate. */
      cert?: string;
      /** PEM text of the client key. */
      key?: string;
      /** False accepts any server certificate (tests only). */
      rejectUnauthorized?: boolean;
      /** The name the server certificate must carry. */
      servername?: string;
    };

/** Where a fleet's settings came from, most important first. */
export type FleetConfigSource = 'flag' | 'env' | 'agent-config' | 'user-config';

/** A resolved fleet configuration: how to reach the fleet's database and how to judge liveness. */
export interface FleetConfig {
  /** The PostgreSQL connection url (`postgres://user:password@host:port/db?sslmode=...`), `${ENV}` resolved. Never print it: use {@link redactUrl}. */
  url: string;
  /** The schema that holds the fleet's tables (`rho_fleet` by default). */
  schema: string;
  /** TLS settings for postgres.js, when given. */
  ssl?: FleetTls;
  /** How often an attached session writes its heartbeat, in ms (5,000 by default). */
  heartbeatIntervalMs: number;
  /** A live-looking session whose heartbeat is older than this is `dead`, in ms (30,000 by default). */
  deadAfterMs: number;
  /** Where the url came from. */
  source: FleetConfigSource;
}

/**
 * The `fleet:` mapping as written in an agent config or `$RHO_HOME/config.yaml` (snake_case,
 * `${ENV}` references unresolved): `url`, `schema`, `ssl`, `heartbeat_interval_ms`,
 * `dead_after_ms`. Core keeps it as written; {@link resolveFleetConfig} validates it.
 */
export type FleetSettings = Record<string, unknown>;

/** Inputs of {@link resolveFleetConfig}, from the most to the least important. */
export interface ResolveFleetConfigOptions {
  /** The `--fleet URL` flag. */
  flag?: string;
  /** The environment: `RHO_FLEET_URL`, and the variables `${ENV}` references name. */
  env: Record<string, string | undefined>;
  /** The agent config's `fleet:` mapping (`AgentConfig.fleet`). */
  agentConfig?: FleetSettings;
  /** `$RHO_HOME/config.yaml`'s `fleet:` mapping (`UserConfig.fleet`). */
  userConfig?: FleetSettings;
  /**
   * The agent config's document (`readConfigFile`/`parseConfigText` of `@rho/core/internal`),
   * `agentConfig` being its `fleet` key: messages then name its file and the line of each key.
   */
  agentConfigSource?: Pick<ConfigSource, 'file' | 'lineOf'>;
  /** `$RHO_HOME/config.yaml`'s document, the same way for `userConfig`. */
  userConfigSource?: Pick<ConfigSource, 'file' | 'lineOf'>;
}

/** The default schema of the fleet's tables. */
export const DEFAULT_FLEET_SCHEMA = 'rho_fleet';
const DEFAULT_HEARTBEAT_MS = 5_000;
const DEFAULT_DEAD_AFTER_MS = 30_000;
const SETTING_KEYS = ['url', 'schema', 'ssl', 'heartbeat_interval_ms', 'dead_after_ms'];
const TLS_MODES = ['require', 'prefer', 'allow', 'verify-full'] as const;
const TLS_OPTIONS =
  'is not a TLS option rho passes on (known: ca, cert, key as PEM text, rejectUnauthorized, servername)';

/** The `fleet:` mapping's shape: its keys, and the url's type (the other values are checked when used). */
const settingsSchema = v.pipe(
  v.unknown(),
  v.check(isMapping, 'must be a mapping such as {url: postgres://..., schema: rho_fleet}'),
  v.strictObject(
    {
      url: v.optional(v.string('must be a string (postgres://...)')),
      schema: v.optional(v.unknown()),
      ssl: v.optional(v.unknown()),
      heartbeat_interval_ms: v.optional(v.unknown()),
      dead_after_ms: v.optional(v.unknown()),
    },
    `is an unknown key (known: ${SETTING_KEYS.join(', ')})`,
  ),
);

const schemaName = v.pipe(
  v.string('must be a lower-case SQL identifier such as rho_fleet'),
  v.regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be a lower-case SQL identifier such as rho_fleet'),
);

const MILLISECONDS = 'must be a positive number of milliseconds';
const milliseconds = v.pipe(v.number(MILLISECONDS), v.finite(MILLISECONDS), v.gtValue(0, MILLISECONDS));

/** `ssl`: true, false or a mode, or a mapping of TLS options (each checked on its own line). */
const tlsSchema = v.lazy((input) =>
  isMapping(input)
    ? v.strictObject(
        {
          ca: v.optional(v.string('must be PEM text')),
          cert: v.optional(v.string('must be PEM text')),
          key: v.optional(v.string('must be PEM text')),
          rejectUnauthorized: v.optional(v.boolean('must be true or false')),
          servername: v.optional(v.string('must be a host name')),
        },
        TLS_OPTIONS,
      )
    : v.union(
        [v.boolean(), v.picklist(TLS_MODES)],
        'must be true, false, require, prefer, allow, verify-full or a mapping of TLS options',
      ),
);

/** One `fleet:` mapping and the document it is in (for its file and its lines). */
interface Settings {
  values: Record<string, unknown>;
  source: Pick<ConfigSource, 'file' | 'lineOf'>;
}

/**
 * The fleet configuration, or `undefined` when no fleet is configured (then nothing changes: no
 * driver loads, sessions stay local). The url comes from the first of `--fleet`, `RHO_FLEET_URL`,
 * the agent config's `fleet.url`, `$RHO_HOME/config.yaml`'s `fleet.url`; the other settings from
 * the agent config, else the user config. `${NAME}` in the url is replaced by the environment
 * variable (so the password stays out of files).
 *
 * @throws ConfigError for a malformed `fleet:` mapping (`FILE:LINE: 'fleet.KEY' must be ... (got
 * ...).`, the line when the document is given), an undefined `${NAME}`, a url that is not
 * `postgres://` or `postgresql://`, or a schema that is not a plain identifier. Messages show the
 * url redacted.
 */
export function resolveFleetConfig(options: ResolveFleetConfigOptions): FleetConfig | undefined {
  const agent = settings(options.agentConfig, options.agentConfigSource ?? configSource(undefined, 'the agent config'));
  const user = settings(
    options.userConfig,
    options.userConfigSource ?? configSource(undefined, '$RHO_HOME/config.yaml'),
  );
  const flag = nonEmpty(options.flag);
  const env = nonEmpty(options.env.RHO_FLEET_URL);
  let raw: string | undefined;
  let source: FleetConfigSource;
  let from: Settings | undefined;
  if (flag !== undefined) [raw, source] = [flag, 'flag'];
  else if (env !== undefined) [raw, source] = [env, 'env'];
  else if (typeof agent.values.url === 'string') [raw, source, from] = [agent.values.url, 'agent-config', agent];
  else if (typeof user.values.url === 'string') [raw, source, from] = [user.values.url, 'user-config', user];
  else return undefined;
  const url = interpolate(raw, options.env, source, from);
  if (!/^postgres(ql)?:\/\//.test(url)) {
    if (from !== undefined)
      throw fleetProblem(
        configProblem(from.source, ['fleet', 'url'], 'must start with postgres:// or postgresql://', {
          value: redactUrl(url),
        }),
      );
    throw new ConfigError({
      message: `The fleet url (from ${describe(source)}) must start with postgres:// or postgresql:// (got ${redactUrl(url)}).`,
      code: 'fleet_config',
      field: 'fleet.url',
    });
  }
  // Each setting from the agent config, else the user config, checked where it was written.
  const pick = <TSchema extends GenericSchema>(key: string, schema: TSchema): InferOutput<TSchema> | undefined => {
    const at = agent.values[key] !== undefined && agent.values[key] !== null ? agent : user;
    const value = at.values[key];
    if (value === undefined || value === null) return undefined;
    try {
      return validateConfig(schema, value, at.source, ['fleet', key]);
    } catch (error) {
      throw fleetProblem(error);
    }
  };
  const config: FleetConfig = {
    url,
    schema: pick('schema', schemaName) ?? DEFAULT_FLEET_SCHEMA,
    heartbeatIntervalMs: pick('heartbeat_interval_ms', milliseconds) ?? DEFAULT_HEARTBEAT_MS,
    deadAfterMs: pick('dead_after_ms', milliseconds) ?? DEFAULT_DEAD_AFTER_MS,
    source,
  };
  const ssl = pick('ssl', tlsSchema) as FleetTls | undefined;
  if (ssl !== undefined) config.ssl = ssl;
  return config;
}

/**
 * The url with its password (and any `password=` query parameter) replaced by `***`, for
 * messages and `status()`. Something that does not parse as a url is shown as `<unparsable url>`.
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    for (const key of [...parsed.searchParams.keys()])
      if (/pass|secret|token|key/i.test(key)) parsed.searchParams.set(key, '***');
    return parsed.toString();
  } catch {
    return '<unparsable url>';
  }
}

function settings(value: FleetSettings | undefined, source: Pick<ConfigSource, 'file' | 'lineOf'>): Settings {
  if (value === undefined || value === null) return { values: {}, source };
  try {
    validateConfig(settingsSchema, value, source, ['fleet']);
  } catch (error) {
    throw fleetProblem(error);
  }
  return { values: value, source };
}

function interpolate(
  raw: string,
  env: Record<string, string | undefined>,
  source: FleetConfigSource,
  from: Settings | undefined,
): string {
  return raw.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const value = env[name];
    if (value !== undefined) return value;
    const unset = `references \${${name}}, which is not set; export ${name} or write the value`;
    if (from !== undefined) throw fleetProblem(configProblem(from.source, ['fleet', 'url'], unset));
    throw new ConfigError({
      message: `The fleet url (from ${describe(source)}) ${unset}.`,
      code: 'fleet_config',
      field: 'fleet.url',
    });
  });
}

/** A problem of the config reader with the fleet's error code. */
function fleetProblem(error: unknown): unknown {
  if (!ConfigError.isInstance(error)) return error;
  return new ConfigError({
    message: error.message,
    code: 'fleet_config',
    ...(error.file === undefined ? {} : { file: error.file }),
    ...(error.field === undefined ? {} : { field: error.field }),
    ...(error.line === undefined ? {} : { line: error.line }),
  });
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function describe(source: FleetConfigSource): string {
  return {
    flag: '--fleet',
    env: 'RHO_FLEET_URL',
    'agent-config': "the agent config's fleet.url",
    'user-config': "$RHO_HOME/config.yaml's fleet.url",
  }[source];
}
