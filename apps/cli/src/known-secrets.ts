import type { NamedSecret, SecretRedactor } from '@rho/core';
import { createSecretRedactor } from '@rho/core';

/** Names of variables and settings that hold a secret (`OPENAI_API_KEY`, `password`, `x-api-token`, ...). */
const SECRET_NAME = /key|token|secret|password|passwd|credential|dsn|(^|[_.-])(pass|pwd|auth|authorization)($|[_.-])/i;
/** Variables whose names look like the above but never hold a secret. */
const NOT_SECRET = new Set(['PWD', 'OLDPWD', 'SSH_AUTH_SOCK']);
/** Secrets in variables are at least this long (shorter values would be removed from every text). */
const MIN_LENGTH = 8;
/** OpenTelemetry's exporter headers (`key=value,key2=value2`): every value is a credential. */
const OTEL_HEADER_VARIABLES = ['OTEL_EXPORTER_OTLP_HEADERS', 'OTEL_EXPORTER_OTLP_TRACES_HEADERS'];
/** A reference to a variable, as written in a config (`${GITHUB_TOKEN}`): not a value. */
const REFERENCE = /^\$\{[^}]*\}$/;
/**
 * A short word of lower-case letters (`postgres`, `changeme`, `password`): a default, not a
 * secret worth its cost. Taken, it would replace a tool's name (`postgres`), a setting or a word
 * everywhere in what the model reads.
 */
const WORD = /^[a-z]{1,12}$/;

/** Secrets rho was configured with beyond the environment and the config documents. */
export interface MoreKnownSecrets {
  /** The database aliases the tools serve (`databases.yaml`, `--db-config`, the agent config), resolved. */
  databases?: readonly { alias: string; password?: string | undefined }[];
  /** The MCP servers, with `${ENV}` references resolved: their `env` values and `headers` are credentials. */
  mcpServers?: readonly (
    | { name: string; transport: 'stdio'; env: Readonly<Record<string, string>> }
    | { name: string; transport: 'http'; url: string; headers: Readonly<Record<string, string>> }
  )[];
  /** URLs given on the command line (`--fleet`, `--base-url`, `--otel`): their passwords. */
  urls?: readonly (string | undefined)[];
}

/**
 * The redactor of every secret rho knows, for the whole process: what the model and the trace
 * see (every tool result and trace record of every session), and what leaves the machine (the
 * fleet's tables, OpenTelemetry spans). Its secrets: the values of environment variables with a
 * secret's name (`OPENAI_API_KEY`, `DAYTONA_API_KEY`, `PGPASSWORD`, ...), each value of
 * `OTEL_EXPORTER_OTLP_HEADERS`, the password of every URL among the variables and the settings
 * (fleet url, database connections), every setting whose key names a secret (`password:`,
 * `api_key:`, `headers:`) in the agent config and `$RHO_HOME/config.yaml`, the passwords of the
 * database aliases, and the credentials of the MCP servers (`headers`, and `env` values that are
 * secret-named or look like a credential). Short words of lower-case letters (`postgres`) are not
 * taken. Each is replaced with `[REDACTED:NAME]`, NAME saying
 * where it came from (`OPENAI_API_KEY`, `databases.main.password`); a URL's password with
 * `[REDACTED]`.
 */
export function knownSecretsRedactor(
  env: NodeJS.ProcessEnv,
  documents: readonly unknown[],
  more: MoreKnownSecrets = {},
): SecretRedactor {
  const secrets: NamedSecret[] = [];
  const take = (name: string, value: string, minimum = MIN_LENGTH) => {
    if (value.length >= minimum && !REFERENCE.test(value) && !WORD.test(value)) secrets.push({ name, value });
  };
  // A URL's password is a secret whatever its length (the redactor still ignores the very shortest).
  const password = (value: string) => secrets.push({ name: '', value });
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value === '') continue;
    if (SECRET_NAME.test(name) && !NOT_SECRET.has(name)) take(name, value);
    urlPassword(value, password);
  }
  for (const name of OTEL_HEADER_VARIABLES) {
    for (const pair of (env[name] ?? '').split(',')) {
      const equals = pair.indexOf('=');
      if (equals <= 0) continue;
      const header = pair.slice(0, equals).trim();
      headerValue(`${name}.${header}`, safeDecode(pair.slice(equals + 1).trim()), take);
    }
  }
  for (const database of more.databases ?? [])
    if (typeof database.password === 'string') take(`databases.${database.alias}.password`, database.password, 1);
  for (const server of more.mcpServers ?? []) {
    const prefix = `mcp_servers.${server.name}`;
    if (server.transport === 'stdio') {
      for (const [variable, value] of Object.entries(server.env))
        if ((SECRET_NAME.test(variable) && !NOT_SECRET.has(variable)) || looksLikeCredential(value))
          take(`${prefix}.env.${variable}`, value, 1);
    } else {
      for (const [header, value] of Object.entries(server.headers))
        headerValue(`${prefix}.headers.${header}`, value, take);
      urlPassword(server.url, password);
    }
  }
  for (const url of more.urls ?? []) if (url !== undefined) urlPassword(url, password);
  // Last: a value named above (resolved) keeps that name.
  for (const document of documents) collect(document, '', false, take, password);
  return createSecretRedactor(secrets);
}

/**
 * What a value of a mapping of no secret name still gives away: a word of letters and digits
 * together, without spaces, that is not a path or a URL (`ghp_1a2B...`, `xoxb-123-abc`; not
 * `production`, `/usr/bin`, `8080`).
 */
function looksLikeCredential(value: string): boolean {
  return (
    value.length >= MIN_LENGTH &&
    !/\s/.test(value) &&
    /[A-Za-z]/.test(value) &&
    /\d/.test(value) &&
    !/^[/~.]/.test(value) &&
    !value.includes('://')
  );
}

/** A header's value, and its credential alone when it has a scheme (`Bearer TOKEN`, `Basic ...`). */
function headerValue(name: string, value: string, take: (name: string, value: string, minimum?: number) => void) {
  take(name, value, 1);
  const scheme = /^\s*[A-Za-z-]+\s+(\S+)\s*$/.exec(value);
  if (scheme !== null) take(name, scheme[1]!, 1);
}

function collect(
  value: unknown,
  path: string,
  secret: boolean,
  take: (name: string, value: string, minimum?: number) => void,
  password: (value: string) => void,
): void {
  if (typeof value === 'string') {
    if (secret) take(path, value);
    urlPassword(value, password);
  } else if (Array.isArray(value)) {
    for (const item of value) collect(item, path, secret, take, password);
  } else if (value !== null && typeof value === 'object') {
    // Every value under `headers:` is a secret (`x-honeycomb-team`, `Authorization`); so is a
    // credential-looking value under an MCP server's `env:`.
    const under = path.slice(path.lastIndexOf('.') + 1);
    for (const [key, item] of Object.entries(value)) {
      const itemSecret =
        secret ||
        key === 'headers' ||
        SECRET_NAME.test(key) ||
        (under === 'env' && typeof item === 'string' && looksLikeCredential(item));
      collect(item, path === '' ? key : `${path}.${key}`, itemSecret, take, password);
    }
  }
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function urlPassword(value: string, take: (value: string) => void): void {
  if (!value.includes('://') || !value.includes('@')) return;
  try {
    const password = new URL(value.trim()).password;
    if (password !== '') {
      take(password);
      take(safeDecode(password));
    }
  } catch {
    // Not a URL.
  }
}

/**
 * {@link knownSecretsRedactor} for commands that run no agent (`rho export`, `rho eval`): the
 * environment, `$RHO_HOME/config.yaml` (its MCP servers resolved), and the database aliases of
 * `--db-config`/`RHO_DB_CONFIG`/`$RHO_HOME/databases.yaml`. A file that cannot be read adds
 * nothing (the command reports its own errors).
 */
export async function processSecretsRedactor(
  env: NodeJS.ProcessEnv,
  home: string,
  options: { dbConfigPath?: string } = {},
): Promise<SecretRedactor> {
  const [{ loadUserConfig }, { resolveDatabaseConfig }, { parseMcpServerSources }] = await Promise.all([
    import('@rho/core/internal'),
    import('@rho/tools-db'),
    import('@rho/tools-mcp'),
  ]);
  const documents: unknown[] = [];
  const more: MoreKnownSecrets = {};
  try {
    const userConfig = loadUserConfig(home);
    documents.push(userConfig);
    try {
      more.mcpServers = parseMcpServerSources([{ origin: userConfig.path, servers: userConfig.mcpServers }], { env });
    } catch {
      // A server whose ${VAR} is unset: its written settings are still in the document.
    }
  } catch {
    // No readable config.yaml.
  }
  try {
    more.databases = (
      await resolveDatabaseConfig({
        env,
        rhoHome: home,
        ...(options.dbConfigPath === undefined ? {} : { path: options.dbConfigPath }),
      })
    ).databases;
  } catch {
    // No readable databases.yaml.
  }
  return knownSecretsRedactor(env, documents, more);
}
