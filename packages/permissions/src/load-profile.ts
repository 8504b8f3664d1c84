import { readdir, readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { ConfigError, rhoHome } from '@rho/core';
import { parseConfigText } from '@rho/core/internal';
import { suggestKey } from '@rho/core/settings';
import { BUILTIN_PROFILES, builtinProfile } from './builtin-profiles.js';
import { parseProfile, type PermissionProfile } from './permission-profile.js';

/** Options of {@link loadProfile}. */
export interface LoadProfileOptions {
  /** rho's home directory; defaults to core's `rhoHome()` (`$RHO_HOME`, else `$XDG_CONFIG_HOME/rho`, else `~/.config/rho`). */
  rhoHome?: string;
}

function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return path;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

async function loadFile(path: string): Promise<PermissionProfile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new ConfigError({
      message: `Profile file ${path} cannot be read: ${(error as Error).message}.`,
      file: path,
      cause: error,
    });
  }
  // Not valid YAML: `PATH:LINE: not valid YAML: ...`; a wrong value: `PATH:LINE: 'KEY' must be ...`.
  const source = parseConfigText(text, path);
  return parseProfile(source.value, source);
}

/**
 * Load a profile by built-in name (`readonly`, `developer`, `unrestricted` or its alias `eval`,
 * `developer-bash-only`), by path to a YAML file, or by name from `$RHO_HOME/profiles/<name>.yaml`.
 * Built-in names win, as in the original. Throws a `ConfigError` that says what is accepted.
 */
export async function loadProfile(nameOrPath: string, options: LoadProfileOptions = {}): Promise<PermissionProfile> {
  const builtin = builtinProfile(nameOrPath);
  if (builtin) return builtin;
  const candidate = expandHome(nameOrPath);
  const looksLikePath = candidate.includes('/') || /\.ya?ml$/i.test(candidate);
  if (await isFile(candidate)) return loadFile(isAbsolute(candidate) ? candidate : resolve(candidate));
  if (looksLikePath) {
    throw new ConfigError({ message: `Profile file not found: ${nameOrPath}.`, file: nameOrPath });
  }
  const directory = join(options.rhoHome ?? rhoHome(), 'profiles');
  for (const extension of ['.yaml', '.yml']) {
    const path = join(directory, `${nameOrPath}${extension}`);
    if (await isFile(path)) return loadFile(path);
  }
  const near = await nearestProfile(nameOrPath, directory);
  throw new ConfigError({
    message: `Unknown profile: ${nameOrPath}${near === undefined ? '' : ` (did you mean ${near}?)`}. Use one of ${BUILTIN_PROFILES.join(', ')}, a profile file ${join(directory, `${nameOrPath}.yaml`)}, or a path to a YAML file.`,
    field: 'profile',
  });
}

/** The built-in or `$RHO_HOME/profiles` profile `name` most likely means (a typo), if any. */
async function nearestProfile(name: string, directory: string): Promise<string | undefined> {
  const files = await readdir(directory).catch(() => [] as string[]);
  const names = [...BUILTIN_PROFILES, ...files.flatMap((file) => /^(.+)\.ya?ml$/i.exec(file)?.[1] ?? [])];
  // suggestKey compares with `-` read as `_`: compare the names the same way, and answer the real one.
  const { suggestion } = suggestKey(
    name,
    names.map((known) => known.toLowerCase().replace(/-/g, '_')),
  );
  return suggestion === undefined
    ? undefined
    : names.find((known) => known.toLowerCase().replace(/-/g, '_') === suggestion);
}
