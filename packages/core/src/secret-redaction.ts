/** What a redacted secret without a name (and the password of a URL) is replaced with. */
export const REDACTED = '[REDACTED]';

/** A secret with the name it is known by: it is replaced with `[REDACTED:NAME]`. */
export interface NamedSecret {
  /** Where the secret comes from (`OPENAI_API_KEY`, `databases.main.password`); shown in the marker. */
  name: string;
  /** The secret itself. */
  value: string;
}

/** What {@link createSecretRedactor} takes: secrets, named or not (empty and missing ones are skipped). */
export type SecretInput = string | { name: string; value: string | undefined } | undefined | null;

/**
 * The one gate secrets do not pass: what the model and the trace see (every tool result and trace
 * record of a session given one, see `AgentOptions.redactor`) and what leaves the machine (the
 * fleet's tables, OpenTelemetry spans). Made by {@link createSecretRedactor}.
 */
export interface SecretRedactor {
  /**
   * A JSON-like value with every string redacted (keys included); other values as they are. The
   * value itself is returned when nothing in it had to change (nothing is copied), otherwise a
   * copy: the input is never changed.
   */
  <T>(value: T): T;
  /** One string, redacted. */
  text(value: string): string;
  /** The known secrets it removes, with their URL-encoded and JSON-escaped forms, longest first. */
  readonly secrets: readonly string[];
  /** The secrets as given (a name is `''` for a secret given without one), to make a redactor of these plus more. */
  readonly named: readonly NamedSecret[];
}

/** Shorter values are not taken as secrets: replacing them everywhere would garble the text. */
const MIN_SECRET_LENGTH = 6;

/** `scheme://user:password@`: the password of a URL written anywhere in a text. */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@'"]*:)([^\s/?#@'"]+)@/gi;

/**
 * The one redaction of rho: each known secret (rho's API keys, the passwords of the databases it
 * was configured with, exporter headers, MCP servers' credentials; see the CLI's
 * `knownSecretsRedactor`), as written, URL-encoded and JSON-escaped, becomes `[REDACTED:NAME]`
 * (`[REDACTED]` for a secret given without a name), and the password of any URL written in a text
 * (`postgres://app:PASSWORD@db/...`, whoever typed it) becomes {@link REDACTED}. Values shorter
 * than six characters are not taken as secrets. Where secrets overlap in a text, the whole
 * overlapping stretch is replaced (so no part of either is left).
 *
 * The cost does not grow with the number of secrets: beyond a few (where the engine's own string
 * search, once per secret, is quicker), a text is scanned once, with a rolling hash of a window as
 * long as the shortest secret (a table lookup per character); only a window whose hash is a
 * secret's is compared.
 */
export function createSecretRedactor(secrets: Iterable<SecretInput> = []): SecretRedactor {
  const named: NamedSecret[] = [];
  // Each form of a secret, with its marker; the first name given for a value wins.
  const markers = new Map<string, string>();
  for (const input of secrets) {
    const secret = typeof input === 'string' ? { name: '', value: input } : input;
    if (secret === undefined || secret === null || typeof secret.value !== 'string') continue;
    if (secret.value.length < MIN_SECRET_LENGTH) continue;
    const name = typeof secret.name === 'string' ? secret.name : '';
    named.push({ name, value: secret.value });
    const marker = markerOf(name);
    for (const form of formsOf(secret.value)) if (!markers.has(form)) markers.set(form, marker);
  }
  const list = [...markers.keys()].sort((left, right) => right.length - left.length);
  const replaceKnown =
    list.length === 0
      ? (value: string) => value
      : list.length <= FEW_SECRETS
        ? fewSecretsMatcher(list, markers)
        : knownSecretMatcher(markers);
  const text = (value: string): string => {
    const result = replaceKnown(value);
    if (!result.includes('://')) return result;
    return result.replace(URL_PASSWORD, (_match, prefix: string) => `${prefix}${REDACTED}@`);
  };
  const redact = <T>(value: T): T => redactValue(value, text) as T;
  return Object.assign(redact, { text, secrets: list, named });
}

/**
 * One redactor of the secrets of both (either may be missing); `undefined` when both are. A
 * redactor merged with itself, or with none, is returned as it is.
 */
export function mergeSecretRedactors(
  first: SecretRedactor | undefined,
  second: SecretRedactor | undefined,
): SecretRedactor | undefined {
  if (first === undefined || first === second) return second;
  if (second === undefined) return first;
  return createSecretRedactor([...first.named, ...second.named]);
}

function markerOf(name: string): string {
  const clean = name.replace(/[^A-Za-z0-9_.:/-]+/g, '_').slice(0, 80);
  return clean === '' ? REDACTED : `[REDACTED:${clean}]`;
}

/** The secret as written, URL-encoded (in a URL or a query) and JSON-escaped (in a JSON text). */
function formsOf(value: string): string[] {
  const forms = [value];
  const encoded = encodeURIComponent(value);
  if (encoded !== value) forms.push(encoded);
  const escaped = JSON.stringify(value).slice(1, -1);
  if (escaped !== value) forms.push(escaped);
  return forms;
}

/** Up to this many forms of secrets, each is searched for on its own (native search beats one JS pass). */
const FEW_SECRETS = 24;

/** Replaces each secret found by a search of its own; overlapping finds become one stretch. */
function fewSecretsMatcher(
  secrets: readonly string[],
  markers: ReadonlyMap<string, string>,
): (value: string) => string {
  return (text: string): string => {
    let finds: { start: number; end: number; marker: string }[] | undefined;
    for (const secret of secrets) {
      for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, at + 1))
        (finds ??= []).push({ start: at, end: at + secret.length, marker: markers.get(secret)! });
    }
    if (finds === undefined) return text;
    // By start, the longest first at one start: its marker names the stretch.
    finds.sort((left, right) => left.start - right.start || right.end - left.end);
    const parts: string[] = [];
    let copied = 0;
    let index = 0;
    while (index < finds.length) {
      const { start, marker } = finds[index]!;
      let end = finds[index]!.end;
      index += 1;
      while (index < finds.length && finds[index]!.start < end) {
        end = Math.max(end, finds[index]!.end);
        index += 1;
      }
      parts.push(text.slice(copied, start), marker);
      copied = end;
    }
    parts.push(text.slice(copied));
    return parts.join('');
  };
}

const HASH_BASE = 31;

/**
 * Replaces every known secret of `markers` (secret → marker) in one pass. A rolling hash of a
 * window of the shortest secret's length marks, in a bit table about 64 times larger than the
 * number of secrets (so few other windows hit one), the windows that start a secret; only those
 * positions are compared with the secrets of that hash (longest first).
 */
function knownSecretMatcher(markers: ReadonlyMap<string, string>): (value: string) => string {
  const secrets = [...markers.keys()].sort((left, right) => right.length - left.length);
  const window = Math.min(...secrets.map((secret) => secret.length));
  let dropFactor = 1;
  for (let index = 0; index < window - 1; index += 1) dropFactor = Math.imul(dropFactor, HASH_BASE);
  const hashAt = (text: string, start: number): number => {
    let hash = 0;
    for (let index = 0; index < window; index += 1)
      hash = (Math.imul(hash, HASH_BASE) + text.charCodeAt(start + index)) | 0;
    return hash;
  };
  const bits = Math.min(24, Math.max(16, Math.ceil(Math.log2(secrets.length * 64))));
  const mask = (1 << bits) - 1;
  const slot = (hash: number): number => (hash ^ (hash >>> bits)) & mask;
  const table = new Uint32Array(1 << (bits - 5));
  const buckets = new Map<number, { secret: string; marker: string }[]>();
  for (const secret of secrets) {
    const hash = hashAt(secret, 0);
    const at = slot(hash);
    table[at >>> 5]! |= 1 << (at & 31);
    let bucket = buckets.get(hash);
    if (bucket === undefined) buckets.set(hash, (bucket = []));
    bucket.push({ secret, marker: markers.get(secret)! });
  }
  return (text: string): string => {
    const length = text.length;
    if (length < window) return text;
    let parts: string[] | undefined;
    let copied = 0;
    // The stretch being replaced: overlapping secrets extend it.
    let spanStart = -1;
    let spanEnd = -1;
    let spanMarker = '';
    let hash = hashAt(text, 0);
    for (let position = 0; ; position += 1) {
      const at = slot(hash);
      if ((table[at >>> 5]! & (1 << (at & 31))) !== 0) {
        const bucket = buckets.get(hash);
        if (bucket !== undefined) {
          for (const candidate of bucket) {
            if (!text.startsWith(candidate.secret, position)) continue;
            const end = position + candidate.secret.length;
            if (position < spanEnd) {
              if (end > spanEnd) spanEnd = end;
            } else {
              if (spanStart >= 0) {
                (parts ??= []).push(text.slice(copied, spanStart), spanMarker);
                copied = spanEnd;
              }
              spanStart = position;
              spanEnd = end;
              spanMarker = candidate.marker;
            }
            break;
          }
        }
      }
      if (position + window >= length) break;
      hash =
        (Math.imul(hash - Math.imul(text.charCodeAt(position), dropFactor), HASH_BASE) +
          text.charCodeAt(position + window)) |
        0;
    }
    if (spanStart < 0) return text;
    (parts ??= []).push(text.slice(copied, spanStart), spanMarker, text.slice(spanEnd));
    return parts.join('');
  };
}

function redactValue(value: unknown, text: (value: string) => string): unknown {
  if (typeof value === 'string') return text(value);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index += 1) {
      const item: unknown = value[index];
      const redacted = redactValue(item, text);
      if (redacted !== item) (copy ??= [...value])[index] = redacted;
    }
    return copy ?? value;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  let copy: Record<string, unknown> | undefined;
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index]!;
    const item = record[key];
    const newKey = text(key);
    const newItem = redactValue(item, text);
    if (copy === undefined && (newKey !== key || newItem !== item)) {
      // The first change: the entries before it are copied as they are.
      copy = {};
      for (let before = 0; before < index; before += 1) copy[keys[before]!] = record[keys[before]!];
    }
    if (copy !== undefined) copy[newKey] = newItem;
  }
  return copy ?? value;
}
