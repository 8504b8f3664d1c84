import { ConfigError } from '@rho/core';

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
}

/** The default schema of the fleet's tables. */
export const DEFAULT_FLEET_SCHEMA = 'rho_fleet';
const DEFAULT_HEARTBEAT_MS = 5_000;
const DEFAULT_DEAD_AFTER_MS = 30_000;
const SETTING_KEYS = ['url', 'schema', 'ssl', 'heartbeat_interval_ms', 'dead_after_ms'];

/**
 * The fleet configuration, or `undefined` when no fleet is configured (then nothing changes: no
 * driver loads, sessions stay local). The url comes from the first of `--fleet`, `RHO_FLEET_URL`,
 * the agent config's `fleet.url`, `$RHO_HOME/config.yaml`'s `fleet.url`; the other settings from
 * the agent config, else the user config. `${NAME}` in the url is replaced by the environment
 * variable (so the password stays out of files).
 *
 * @throws ConfigError for a malformed `fleet:` mapping, an undefined `${NAME}`, a url that is not
 * `postgres://` or `postgresql://`, or a schema that is not a plain identifier. Messages show the
 * url redacted.
 */
export function resolveFleetConfig(options: ResolveFleetConfigOptions): FleetConfig | undefined {
  const agent = settings(options.agentConfig, 'the agent config');
  const user = settings(options.userConfig, '$RHO_HOME/config.yaml');
  const flag = nonEmpty(options.flag);
  const env = nonEmpty(options.env.RHO_FLEET_URL);
  let raw: string | undefined;
  let source: FleetConfigSource;
  if (flag !== undefined) [raw, source] = [flag, 'flag'];
  else if (env !== undefined) [raw, source] = [env, 'env'];
  else if (typeof agent.url === 'string') [raw, source] = [agent.url, 'agent-config'];
  else if (typeof user.url === 'string') [raw, source] = [user.url, 'user-config'];
  else return undefined;
  const url = interpolate(raw, options.env, source);
  if (!/^postgres(ql)?:\/\//.test(url))
    throw new ConfigError({
      message: `The fleet url (from ${describe(source)}) must start with postgres:// or postgresql:// (got ${redactUrl(url)}).`,
      code: 'fleet_config',
      field: 'fleet.url',
    });
  const pick = (key: string): unknown => agent[key] ?? user[key];
  const schema = pick('schema') ?? DEFAULT_FLEET_SCHEMA;
  if (typeof schema !== 'string' || !/^[a-z_][a-z0-9_]{0,62}$/.test(schema))
    throw new ConfigError({
      message: `fleet.schema must be a lower-case SQL identifier such as rho_fleet (got ${JSON.stringify(schema)}).`,
      code: 'fleet_config',
      field: 'fleet.schema',
    });
  const config: FleetConfig = {
    url,
    schema,
    heartbeatIntervalMs: milliseconds(pick('heartbeat_interval_ms'), 'heartbeat_interval_ms', DEFAULT_HEARTBEAT_MS),
    deadAfterMs: milliseconds(pick('dead_after_ms'), 'dead_after_ms', DEFAULT_DEAD_AFTER_MS),
    source,
  };
  const ssl = pick('ssl');
  if (ssl !== undefined) config.ssl = tls(ssl);
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

function settings(value: FleetSettings | undefined, origin: string): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new ConfigError({
      message: `${origin}: 'fleet' must be a mapping such as {url: postgres://..., schema: rho_fleet}.`,
      code: 'fleet_config',
      field: 'fleet',
    });
  for (const key of Object.keys(value))
    if (!SETTING_KEYS.includes(key))
      throw new ConfigError({
        message: `${origin}: unknown key 'fleet.${key}' (known: ${SETTING_KEYS.join(', ')}).`,
        code: 'fleet_config',
        field: `fleet.${key}`,
      });
  if (value.url !== undefined && typeof value.url !== 'string')
    throw new ConfigError({
      message: `${origin}: 'fleet.url' must be a string (postgres://...).`,
      code: 'fleet_config',
      field: 'fleet.url',
    });
  return value;
}

function interpolate(raw: string, env: Record<string, string | undefined>, source: FleetConfigSource): string {
  return raw.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const value = env[name];
    if (value === undefined)
      throw new ConfigError({
        message: `The fleet url (from ${describe(source)}) references \${${name}}, which is not set; export ${name} or write the value.`,
        code: 'fleet_config',
        field: 'fleet.url',
      });
    return value;
  });
}

function milliseconds(value: unknown, key: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new ConfigError({
      message: `fleet.${key} must be a positive number of milliseconds (got ${JSON.stringify(value)}).`,
      code: 'fleet_config',
      field: `fleet.${key}`,
    });
  return value;
}

function tls(value: unknown): FleetTls {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && ['require', 'prefer', 'allow', 'verify-full'].includes(value))
    return value as FleetTls;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const known = ['ca', 'cert', 'key', 'rejectUnauthorized', 'servername'];
    for (const [key, item] of Object.entries(value)) {
      const ok = key === 'rejectUnauthorized' ? typeof item === 'boolean' : typeof item === 'string';
      if (!known.includes(key) || !ok)
        throw new ConfigError({
          message: `fleet.ssl.${key} is not a TLS option rho passes on (known: ca, cert, key as PEM text, rejectUnauthorized, servername).`,
          code: 'fleet_config',
          field: `fleet.ssl.${key}`,
        });
    }
    return value as FleetTls;
  }
  throw new ConfigError({
    message: `fleet.ssl must be true, false, require, prefer, allow, verify-full or a mapping of TLS options (got ${JSON.stringify(value)}).`,
    code: 'fleet_config',
    field: 'fleet.ssl',
  });
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
