import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SecretRedactor } from '@rho/core';
import type { AgentConfig } from '@rho/core/internal';
import { ConfigError } from '@rho/core';
import { loadAgentConfig, parseAgentConfig } from '@rho/core/internal';
import { parse as parseYaml } from 'yaml';

/**
 * The file beside a session's `config.yaml` that keeps the secrets redacted out of it (an inline
 * database password, an MCP server's token), so that `rho --resume` connects as the first run
 * did. Readable by its owner only; never exported, mirrored or shown to the model.
 */
export const SESSION_SECRETS_FILE = 'secrets.json';

interface SavedSecret {
  /** Where in the config document: keys and list indexes. */
  path: (string | number)[];
  /** The value as written before redaction. */
  value: string;
}

/**
 * The config document to save as a session's `config.yaml`, its known secrets redacted, and what
 * was taken out (empty when nothing was). {@link writeSessionSecrets} keeps the latter.
 */
export function redactSessionConfig(
  document: Record<string, unknown>,
  redactor: SecretRedactor,
): { document: Record<string, unknown>; secrets: SavedSecret[] } {
  const redacted = redactor(document);
  const secrets: SavedSecret[] = [];
  if (redacted !== document) differences(document, redacted, [], secrets);
  return { document: redacted, secrets };
}

/** Writes what {@link redactSessionConfig} took out, readable by the owner only (nothing when empty). */
export function writeSessionSecrets(directory: string, secrets: readonly SavedSecret[]): void {
  if (secrets.length === 0) return;
  const path = join(directory, SESSION_SECRETS_FILE);
  writeFileSync(path, `${JSON.stringify({ secrets }, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}

/**
 * A session's saved `config.yaml` with the secrets of its `secrets.json` put back where they were
 * (as `loadAgentConfig` reads it when there is no such file).
 *
 * @throws ConfigError when either file cannot be read.
 */
export function loadSessionConfig(directory: string): AgentConfig {
  const path = join(directory, 'config.yaml');
  const secretsPath = join(directory, SESSION_SECRETS_FILE);
  if (!existsSync(secretsPath)) return loadAgentConfig(path);
  let document: unknown;
  let secrets: SavedSecret[];
  try {
    document = parseYaml(readFileSync(path, 'utf8'));
    secrets = (JSON.parse(readFileSync(secretsPath, 'utf8')) as { secrets?: SavedSecret[] }).secrets ?? [];
  } catch (error) {
    throw new ConfigError({
      message: `Cannot read the saved configuration of session ${directory}: ${(error as Error).message}. Fix or remove ${secretsPath}.`,
      file: secretsPath,
      cause: error,
    });
  }
  for (const { path: where, value } of secrets) restore(document, where, value);
  return parseAgentConfig(document, path);
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
