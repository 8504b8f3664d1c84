import type { NamedSecret } from '../secret-redaction.js';

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

/** Whether a variable's or a setting's name says it holds a secret. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name) && !NOT_SECRET.has(name);
}

/**
 * What a value of a mapping of no secret name still gives away: a word of letters and digits
 * together, without spaces, that is not a path or a URL (`ghp_1a2B...`, `xoxb-123-abc`; not
 * `production`, `/usr/bin`, `8080`).
 */
export function looksLikeCredential(value: string): boolean {
  return (
    value.length >= MIN_LENGTH &&
    !/\s/.test(value) &&
    /[A-Za-z]/.test(value) &&
    /\d/.test(value) &&
    !/^[/~.]/.test(value) &&
    !value.includes('://')
  );
}

/** Collects secrets, by the rules of {@link collectKnownSecrets}. */
export class SecretCollector {
  readonly secrets: NamedSecret[] = [];

  /** A named secret, unless it is a `${VAR}` reference, a short word, or shorter than `minimum`. */
  take(name: string, value: string, minimum = MIN_LENGTH): void {
    if (value.length >= minimum && !REFERENCE.test(value) && !WORD.test(value)) this.secrets.push({ name, value });
  }

  /** A header's value, and its credential alone when it has a scheme (`Bearer TOKEN`, `Basic ...`). */
  header(name: string, value: string): void {
    this.take(name, value, 1);
    const scheme = /^\s*[A-Za-z-]+\s+(\S+)\s*$/.exec(value);
    if (scheme !== null) this.take(name, scheme[1]!, 1);
  }

  /** The password of a URL (whatever its length: the redactor still ignores the very shortest), as written and decoded. */
  urlPassword(value: string): void {
    if (!value.includes('://') || !value.includes('@')) return;
    try {
      const password = new URL(value.trim()).password;
      if (password !== '') {
        this.secrets.push({ name: '', value: password });
        this.secrets.push({ name: '', value: safeDecode(password) });
      }
    } catch {
      // Not a URL.
    }
  }

  /** The environment's secrets: variables of a secret's name, URL passwords, the exporter's headers. */
  environment(env: Readonly<Record<string, string | undefined>>): void {
    for (const [name, value] of Object.entries(env)) {
      if (value === undefined || value === '') continue;
      if (isSecretName(name)) this.take(name, value);
      this.urlPassword(value);
    }
    for (const name of OTEL_HEADER_VARIABLES) {
      for (const pair of (env[name] ?? '').split(',')) {
        const equals = pair.indexOf('=');
        if (equals <= 0) continue;
        this.header(`${name}.${pair.slice(0, equals).trim()}`, safeDecode(pair.slice(equals + 1).trim()));
      }
    }
  }

  /**
   * A configuration document's secrets: every string under a key of a secret's name or under
   * `headers:`, a credential-looking value under an `env:` mapping, and every URL's password.
   */
  document(value: unknown, path = '', secret = false): void {
    if (typeof value === 'string') {
      if (secret) this.take(path, value);
      this.urlPassword(value);
    } else if (Array.isArray(value)) {
      for (const item of value) this.document(item, path, secret);
    } else if (value !== null && typeof value === 'object') {
      const under = path.slice(path.lastIndexOf('.') + 1);
      for (const [key, item] of Object.entries(value)) {
        const itemSecret =
          secret ||
          key === 'headers' ||
          SECRET_NAME.test(key) ||
          (under === 'env' && typeof item === 'string' && looksLikeCredential(item));
        this.document(item, path === '' ? key : `${path}.${key}`, itemSecret);
      }
    }
  }
}

/**
 * Every secret rho knows from the environment and configuration documents, named for its marker
 * (`[REDACTED:OPENAI_API_KEY]`, `[REDACTED:databases.main.password]`; a URL's password unnamed,
 * `[REDACTED]`): the values of variables with a secret's name (`OPENAI_API_KEY`,
 * `DAYTONA_API_KEY`, `PGPASSWORD`, ...), each value of `OTEL_EXPORTER_OTLP_HEADERS`, the password
 * of every URL among the variables, `urls` and the settings, `named` (what the sections resolved:
 * database passwords, MCP servers' credentials), and every setting of the `documents` whose key
 * names a secret (`password:`, `api_key:`, `headers:`). Short words of lower-case letters
 * (`postgres`) are not taken. A value named earlier keeps its name.
 */
export function collectKnownSecrets(
  env: Readonly<Record<string, string | undefined>>,
  documents: readonly unknown[],
  options: {
    named?: readonly { name: string; value: string; minimumLength?: number }[];
    urls?: readonly (string | undefined)[];
  } = {},
): NamedSecret[] {
  const collector = new SecretCollector();
  collector.environment(env);
  for (const { name, value, minimumLength } of options.named ?? []) collector.take(name, value, minimumLength);
  for (const url of options.urls ?? []) if (url !== undefined) collector.urlPassword(url);
  // Last: a value named above (resolved) keeps that name.
  for (const document of documents) collector.document(document);
  return collector.secrets;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
