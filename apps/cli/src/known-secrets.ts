import type { SecretRedactor } from '@rho/core';
import { createSecretRedactor } from '@rho/core';

/** Names of variables and settings that hold a secret (`OPENAI_API_KEY`, `password`, `x-api-token`, ...). */
const SECRET_NAME = /key|token|secret|password|passwd|credential|dsn|(^|[_.-])(pass|pwd|auth|authorization)($|[_.-])/i;
/** Variables whose names look like the above but never hold a secret. */
const NOT_SECRET = new Set(['PWD', 'OLDPWD', 'SSH_AUTH_SOCK']);
/** Secrets in variables are at least this long (shorter values would be removed from every text). */
const MIN_LENGTH = 8;

/**
 * The redactor of what leaves this machine (the fleet's tables, OpenTelemetry spans): one for the
 * whole process, so both sinks remove the same secrets. Its secrets: the values of environment
 * variables with a secret's name (`OPENAI_API_KEY`, `DAYTONA_API_KEY`, `PGPASSWORD`, ...), the
 * password of every URL among the variables and the settings (fleet url, database connections),
 * and every setting whose key names a secret (`password:`, `api_key:`, exporter `headers:`) in
 * the agent config and `$RHO_HOME/config.yaml`.
 */
export function knownSecretsRedactor(env: NodeJS.ProcessEnv, documents: readonly unknown[]): SecretRedactor {
  const secrets = new Set<string>();
  const take = (value: string) => {
    if (value.length >= MIN_LENGTH) secrets.add(value);
  };
  // A URL's password is a secret whatever its length (the redactor still ignores the very shortest).
  const password = (value: string) => secrets.add(value);
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || value === '') continue;
    if (SECRET_NAME.test(name) && !NOT_SECRET.has(name)) take(value);
    urlPassword(value, password);
  }
  for (const document of documents) collect(document, false, take, password);
  return createSecretRedactor(secrets);
}

function collect(
  value: unknown,
  secretKey: boolean,
  take: (value: string) => void,
  password: (value: string) => void,
): void {
  if (typeof value === 'string') {
    if (secretKey) take(value);
    urlPassword(value, password);
  } else if (Array.isArray(value)) {
    for (const item of value) collect(item, secretKey, take, password);
  } else if (value !== null && typeof value === 'object') {
    // Every value under `headers:` is a secret too (`x-honeycomb-team`, `Authorization`).
    for (const [key, item] of Object.entries(value))
      collect(item, secretKey || key === 'headers' || SECRET_NAME.test(key), take, password);
  }
}

function urlPassword(value: string, take: (value: string) => void): void {
  if (!value.includes('://') || !value.includes('@')) return;
  try {
    const password = new URL(value.trim()).password;
    if (password !== '') {
      take(password);
      take(decodeURIComponent(password));
    }
  } catch {
    // Not a URL.
  }
}
