/** What a redacted secret is replaced with. */
export const REDACTED = '[REDACTED]';

/**
 * Removes secrets from what leaves the machine (the fleet's tables, OpenTelemetry spans): see
 * {@link createSecretRedactor}. The local trace keeps what was said; copies sent elsewhere do not.
 */
export interface SecretRedactor {
  /** A copy of a JSON-like value with every string redacted (keys included); other values as they are. */
  <T>(value: T): T;
  /** One string, redacted. */
  text(value: string): string;
  /** The known secrets it removes (for a redactor made from another's plus more). */
  readonly secrets: readonly string[];
}

/** Shorter values are not taken as secrets: replacing them everywhere would garble the text. */
const MIN_SECRET_LENGTH = 6;

/** `scheme://user:password@`: the password of a URL written anywhere in a text. */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@'"]*:)([^\s/?#@'"]+)@/gi;

/**
 * The one redaction every copy of a session that leaves the machine goes through: each known
 * secret (rho's API keys, the passwords of the databases it was configured with, exporter headers;
 * see the CLI's `knownSecrets`), as written and URL-encoded, and the password of any URL written
 * in the text (`postgres://app:PASSWORD@db/...`, whoever typed it) become {@link REDACTED}. Values
 * shorter than six characters are not taken as secrets.
 */
export function createSecretRedactor(secrets: Iterable<string | undefined> = []): SecretRedactor {
  const known = new Set<string>();
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH) continue;
    known.add(secret);
    const encoded = encodeURIComponent(secret);
    if (encoded !== secret) known.add(encoded);
  }
  // Longest first, so a secret that contains another is removed whole.
  const list = [...known].sort((left, right) => right.length - left.length);
  const text = (value: string): string => {
    let result = value;
    for (const secret of list) if (result.includes(secret)) result = result.split(secret).join(REDACTED);
    return result.replace(URL_PASSWORD, (_match, prefix: string) => `${prefix}${REDACTED}@`);
  };
  const redact = <T>(value: T): T => redactValue(value, text) as T;
  return Object.assign(redact, { text, secrets: list });
}

function redactValue(value: unknown, text: (value: string) => string): unknown {
  if (typeof value === 'string') return text(value);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, text));
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[text(key)] = redactValue(item, text);
    return out;
  }
  return value;
}
