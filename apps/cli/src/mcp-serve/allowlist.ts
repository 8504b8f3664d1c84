import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, resolve, sep } from 'node:path';
import { ConfigError } from '@rho/core';
import type { McpServeSettings } from './serve-settings.js';

/** What the server lets its clients use, checked: profiles by name, directories by real path. */
export interface ServeAllowlist {
  readonly profiles: readonly string[];
  readonly defaultProfile: string;
  /** Real paths. */
  readonly directories: readonly string[];
  /** The directory of a task naming none: the first allowed one. */
  readonly defaultDirectory: string;
}

/** What `rho mcp serve --profile P --dir D` narrows the configuration to. */
export interface ServeNarrowing {
  readonly profiles?: readonly string[];
  readonly directories?: readonly string[];
}

/** The profile an unconfigured server allows (D416). */
export const DEFAULT_SERVE_PROFILE = 'readonly';

function realDirectory(dir: string, cwd: string, what: string): string {
  const expanded = dir === '~' ? homedir() : dir.startsWith('~/') ? resolve(homedir(), dir.slice(2)) : dir;
  try {
    return realpathSync(resolve(cwd, expanded));
  } catch (error) {
    throw new ConfigError({
      message: `${what} ${dir} cannot be resolved (${(error as Error).message}): give an existing directory.`,
      cause: error,
    });
  }
}

/** Whether `path` (a real path) is `dir` or lies inside it. */
export function inside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);
}

/**
 * The server's allowlist: `mcp_serve.profiles` and `mcp_serve.directories` of the home config (by
 * default `readonly` and the server's working directory), narrowed by the command's flags, which
 * may only name what the configuration allows.
 *
 * @throws ConfigError naming the entry: a directory that does not exist, a flag that widens, a
 * default profile that is not allowed.
 */
export function serveAllowlist(settings: McpServeSettings, narrowing: ServeNarrowing, cwd: string): ServeAllowlist {
  const configured = unique(settings.profiles ?? [DEFAULT_SERVE_PROFILE]);
  if (configured.length === 0)
    throw new ConfigError({ message: 'mcp_serve.profiles is empty: name at least one profile (readonly).' });
  const configuredDirs = unique(
    (settings.directories ?? [cwd]).map((dir) =>
      realDirectory(dir, cwd, 'The allowed directory (mcp_serve.directories)'),
    ),
  );
  if (configuredDirs.length === 0)
    throw new ConfigError({ message: 'mcp_serve.directories is empty: name at least one directory.' });
  let profiles = configured;
  if (narrowing.profiles !== undefined && narrowing.profiles.length > 0) {
    for (const profile of narrowing.profiles)
      if (!configured.includes(profile))
        throw new ConfigError({
          message: `--profile ${profile} is not in mcp_serve.profiles of $RHO_HOME/config.yaml (${configured.join(', ')}): a flag may narrow the allowlist, never widen it.`,
        });
    profiles = unique(narrowing.profiles);
  }
  let directories = configuredDirs;
  if (narrowing.directories !== undefined && narrowing.directories.length > 0) {
    directories = unique(narrowing.directories.map((dir) => realDirectory(dir, cwd, '--dir')));
    for (const dir of directories)
      if (!configuredDirs.some((allowed) => inside(dir, allowed)))
        throw new ConfigError({
          message: `--dir ${dir} is outside mcp_serve.directories (${configuredDirs.join(', ')}): a flag may narrow the allowlist, never widen it.`,
        });
  }
  const defaultProfile =
    settings.defaultProfile !== undefined && profiles.includes(settings.defaultProfile)
      ? settings.defaultProfile
      : profiles[0]!;
  if (settings.defaultProfile !== undefined && !configured.includes(settings.defaultProfile))
    throw new ConfigError({
      message: `mcp_serve.default_profile ${settings.defaultProfile} is not one of mcp_serve.profiles (${configured.join(', ')}).`,
    });
  return { profiles, defaultProfile, directories, defaultDirectory: directories[0]! };
}

/** The profile a task asked for, or why it is refused. */
export function chooseProfile(
  allow: ServeAllowlist,
  asked: string | undefined,
): { profile: string } | { refusal: string } {
  const profile = asked ?? allow.defaultProfile;
  if (allow.profiles.includes(profile)) return { profile };
  return {
    refusal: `Profile '${profile}' is not allowed by this server; it allows: ${allow.profiles.join(', ')} (the operator lists them in mcp_serve.profiles of $RHO_HOME/config.yaml).`,
  };
}

/** The real working directory a task asked for (relative: to the first allowed directory), or why it is refused. */
export function chooseDirectory(
  allow: ServeAllowlist,
  asked: string | undefined,
): { directory: string } | { refusal: string } {
  const wanted = asked === undefined ? allow.defaultDirectory : resolve(allow.defaultDirectory, asked);
  let real: string;
  try {
    real = realpathSync(wanted);
  } catch {
    return {
      refusal: `The working directory ${asked ?? wanted} does not exist (relative paths are taken from ${allow.defaultDirectory}).`,
    };
  }
  if (allow.directories.some((dir) => inside(real, dir))) return { directory: real };
  return {
    refusal: `The working directory ${isAbsolute(asked ?? '') ? asked : real} is outside the directories this server allows: ${allow.directories.join(', ')} (the operator lists them in mcp_serve.directories of $RHO_HOME/config.yaml).`,
  };
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
