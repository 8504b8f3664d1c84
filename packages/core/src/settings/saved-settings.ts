import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ConfigSource } from '../config-source.js';
import { readConfigFile } from '../config-source.js';
import { ConfigError } from '../errors.js';
import { toYamlDocument } from '../internal/yaml-emit.js';
import type { SecretRedactor } from '../secret-redaction.js';

/**
 * A session's saved settings: `config.yaml` in its directory (the settings its first run used,
 * secrets redacted; what `--resume` starts from) and, beside it, `secrets.json` (readable by its
 * owner only) with what redaction took out, so that a resume connects as the first run did. This
 * module is the one reader and writer of both files: runs and resumes, child sessions, export,
 * `rho connect` and the fleet's copies go through it.
 */
export const SESSION_SETTINGS_FILE = 'config.yaml';
/** The file beside `config.yaml` that keeps the secrets redacted out of it; never exported, mirrored or shown. */
export const SESSION_SECRETS_FILE = 'secrets.json';

/** A session's saved settings, read: the document (secrets put back unless asked not to) with its lines. */
export interface SavedSettings {
  /** The session directory. */
  readonly directory: string;
  /** `config.yaml` as a configuration document (`file` is its path). */
  readonly source: ConfigSource;
}

/** A secret taken out of the saved document: where (keys and list indexes) and its value as written. */
export interface SavedSecret {
  path: (string | number)[];
  value: string;
}

/**
 * Reads a session's saved settings; undefined when it has no `config.yaml` (a session of the
 * Python rho-agent may have none). With `secrets: false`, `secrets.json` is not read (what a copy
 * of the settings gets: a child session, an export).
 *
 * @throws ConfigError when a file cannot be read or is not valid.
 */
export function readSessionSettings(directory: string, options: { secrets?: boolean } = {}): SavedSettings | undefined {
  const path = join(directory, SESSION_SETTINGS_FILE);
  const source = readConfigFile(path);
  if (source === undefined) return undefined;
  const secretsPath = join(directory, SESSION_SECRETS_FILE);
  if (options.secrets === false || !existsSync(secretsPath)) return { directory, source };
  let secrets: SavedSecret[];
  try {
    secrets = (JSON.parse(readFileSync(secretsPath, 'utf8')) as { secrets?: SavedSecret[] }).secrets ?? [];
  } catch (error) {
    throw new ConfigError({
      message: `Cannot read the saved configuration of session ${directory}: ${(error as Error).message}. Fix or remove ${secretsPath}.`,
      file: secretsPath,
      cause: error,
    });
  }
  const value = structuredClone(source.value);
  for (const { path: where, value: secret } of secrets) restore(value, where, secret);
  return { directory, source: { file: source.file, value, lineOf: (at) => source.lineOf(at) } };
}

/**
 * A session's saved settings as a plain mapping (empty when it has none or it cannot be read):
 * for readers that only look (export, `rho connect`, a child's copy). Secrets are not put back.
 */
export function sessionSettingsDocument(directory: string): Record<string, unknown> {
  try {
    const value = readSessionSettings(directory, { secrets: false })?.source.value;
    return isMapping(value) ? value : {};
  } catch {
    return {};
  }
}

/**
 * Writes a session's `config.yaml` (block-style YAML, without loading the `yaml` package). With a
 * redactor, the known secrets are taken out of it and kept in `secrets.json` (0600).
 */
export function writeSessionSettings(
  directory: string,
  document: Record<string, unknown>,
  redactor?: SecretRedactor,
): void {
  const { document: saved, secrets } =
    redactor === undefined ? { document, secrets: [] } : redactSettings(document, redactor);
  writeFileSync(join(directory, SESSION_SETTINGS_FILE), toYamlDocument(saved));
  writeSessionSecrets(directory, secrets);
}

/**
 * The document to save with its known secrets redacted, and what was taken out (empty when
 * nothing was); {@link writeSessionSecrets} keeps the latter.
 */
export function redactSettings(
  document: Record<string, unknown>,
  redactor: SecretRedactor,
): { document: Record<string, unknown>; secrets: SavedSecret[] } {
  const redacted = redactor(document);
  const secrets: SavedSecret[] = [];
  if (redacted !== document) differences(document, redacted, [], secrets);
  return { document: redacted, secrets };
}

/** Writes what {@link redactSettings} took out, readable by the owner only (nothing when empty). */
export function writeSessionSecrets(directory: string, secrets: readonly SavedSecret[]): void {
  if (secrets.length === 0) return;
  const path = join(directory, SESSION_SECRETS_FILE);
  writeFileSync(path, `${JSON.stringify({ secrets }, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}

function differences(original: unknown, redacted: unknown, path: (string | number)[], out: SavedSecret[]): void {
  if (original === redacted) return;
  if (typeof original === 'string') {
    out.push({ path, value: original });
  } else if (Array.isArray(original) && Array.isArray(redacted)) {
    original.forEach((item, index) => differences(item, redacted[index], [...path, index], out));
  } else if (original !== null && typeof original === 'object' && redacted !== null && typeof redacted === 'object') {
    // Keys keep their order; a key that was itself redacted is found under its redacted name.
    const redactedKeys = Object.keys(redacted);
    Object.entries(original).forEach(([key, item], index) => {
      const redactedKey = redactedKeys[index] ?? key;
      differences(item, (redacted as Record<string, unknown>)[redactedKey], [...path, redactedKey], out);
    });
  }
}

function restore(document: unknown, path: readonly (string | number)[], value: string): void {
  let parent = document;
  for (const key of path.slice(0, -1)) {
    if (parent === null || typeof parent !== 'object') return;
    parent = (parent as Record<string | number, unknown>)[key];
  }
  const last = path[path.length - 1];
  if (last === undefined || parent === null || typeof parent !== 'object') return;
  if (typeof (parent as Record<string | number, unknown>)[last] === 'string')
    (parent as Record<string | number, unknown>)[last] = value;
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
