import { realpathSync } from 'node:fs';
import { isAbsolute, resolve, sep } from 'node:path';
import { ConfigError, DEFAULT_APPROVAL_TIMEOUT_MS } from '@rho/core';
import { parseDuration } from '@rho/core/settings';
import type { TaskSpec } from './task-spec.js';

/** The profile a task runs with when it names none, and the only one a worker allows by default. */
export const DEFAULT_TASK_PROFILE = 'readonly';

/**
 * What a worker lets a submitted task choose (`rho worker --allow-profile/--allow-dir/--allow-endpoint`,
 * or `worker:` in `$RHO_HOME/config.yaml`). Anything left out is the narrowest: only the
 * `readonly` profile, only the worker's own working directory, no model endpoint of the task's own.
 */
export interface TaskAllowlistOptions {
  /** Profiles a task may name (names, or YAML paths on the worker). Default: `readonly` only. The first is what a task naming none runs with. */
  profiles?: readonly string[];
  /** Directories a task's `working_dir`, `config` and `sql_eval.databases_dir` must lie in. Default: the worker's working directory only. */
  dirs?: readonly string[];
  /** Model endpoints an `sql_eval` task's `base_url` may name (the worker sends its own key there). Default: none. */
  endpoints?: readonly string[];
  /**
   * The longest a tool call of a task (`auto_approve: false`) may wait for approval here, in
   * milliseconds (default one hour): a task asking for longer is refused, one asking nothing
   * waits this long at most. Never past the task's deadline either way.
   */
  maxApprovalWaitMs?: number;
  /** Whether a task may set `on_timeout: approve` (a call nobody answered then runs). Default false: refused. */
  approveOnTimeout?: boolean;
  /**
   * Whether a task may ask for `workspace: in-place` under a profile that may write files (its
   * changes then land in the worker's checkout, unreviewed). Default false: refused; such a task
   * runs isolated when it leaves `workspace` out.
   */
  inPlace?: boolean;
}

/** A checked allowlist: directories as real absolute paths, endpoints parsed. */
export interface TaskAllowlist {
  readonly profiles: readonly string[];
  readonly dirs: readonly string[];
  readonly endpoints: readonly string[];
  /** The worker's working directory: relative paths of a task resolve against it. */
  readonly cwd: string;
  /** The endpoint the worker itself is configured with (`OPENAI_BASE_URL`): a task naming it changes nothing. */
  readonly ownEndpoint?: string;
  /** The longest a call of a task waits for approval, in milliseconds. */
  readonly maxApprovalWaitMs: number;
  /** Whether a task may set `on_timeout: approve`. */
  readonly approveOnTimeout: boolean;
  /** Whether a task may run `in-place` under a profile that may write. */
  readonly inPlace: boolean;
}

/**
 * Checks and resolves a worker's allowlist. `cwd` is where the worker's sessions run; `ownEndpoint`
 * the model endpoint the worker is configured with.
 *
 * @throws ConfigError naming the entry: an empty profile, a directory that does not exist, an
 * endpoint that is not an http(s) URL without credentials, query or fragment.
 */
export function taskAllowlist(options: TaskAllowlistOptions, cwd: string, ownEndpoint?: string): TaskAllowlist {
  const profiles = unique(options.profiles ?? [DEFAULT_TASK_PROFILE]);
  for (const profile of profiles)
    if (profile.trim() === '')
      throw new ConfigError({ message: 'An allowed profile is empty: name a profile (--allow-profile readonly).' });
  if (profiles.length === 0)
    throw new ConfigError({ message: 'The worker allows no profile: give at least one (--allow-profile readonly).' });
  const dirs = unique(options.dirs ?? [cwd]).map((dir) => {
    try {
      return realpathSync(resolve(cwd, dir));
    } catch (error) {
      throw new ConfigError({
        message: `The allowed directory ${dir} cannot be resolved on this worker (${(error as Error).message}); give an existing directory (--allow-dir).`,
        cause: error,
      });
    }
  });
  const endpoints = unique(options.endpoints ?? []).map((endpoint) => {
    const normal = normalEndpoint(endpoint);
    if (normal === undefined)
      throw new ConfigError({
        message: `The allowed endpoint '${endpoint}' is not an http(s) URL without credentials, query or fragment (--allow-endpoint http://host:port/v1).`,
      });
    return normal;
  });
  const own = ownEndpoint === undefined || ownEndpoint.trim() === '' ? undefined : normalEndpoint(ownEndpoint.trim());
  const maxApprovalWaitMs = options.maxApprovalWaitMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  if (!Number.isFinite(maxApprovalWaitMs) || maxApprovalWaitMs < 1000)
    throw new ConfigError({
      message: `The longest approval wait must be a duration of at least 1s (got ${maxApprovalWaitMs} ms): --max-approval-wait 1h.`,
    });
  return {
    profiles,
    dirs,
    endpoints,
    cwd: resolve(cwd),
    ...(own === undefined ? {} : { ownEndpoint: own }),
    maxApprovalWaitMs,
    approveOnTimeout: options.approveOnTimeout === true,
    inPlace: options.inPlace === true,
  };
}

/**
 * Why a worker with this allowlist refuses the task, in one sentence that says what to change; or
 * undefined when the task asks for nothing beyond it. A refused task is not run.
 */
export function taskRefusal(spec: TaskSpec, allow: TaskAllowlist): string | undefined {
  if (spec.profile !== undefined && !allow.profiles.some((entry) => sameProfile(entry, spec.profile!, allow.cwd)))
    return `profile '${spec.profile}' is not allowed on this worker (it allows ${allow.profiles.join(', ')}; start it with --allow-profile ${spec.profile} to allow it)`;
  const paths: [string, string | undefined][] = [
    ['working_dir', spec.working_dir],
    ['config', spec.config],
    ['sql_eval.databases_dir', spec.sql_eval?.databases_dir],
  ];
  for (const [field, path] of paths) {
    if (path === undefined) continue;
    const real = realOrLexical(resolve(allow.cwd, path));
    if (!allow.dirs.some((dir) => real === dir || real.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`)))
      return `${field} ${path} is outside the directories this worker allows (${allow.dirs.join(', ')}; start it with --allow-dir to allow more)`;
  }
  if (spec.on_timeout === 'approve' && !allow.approveOnTimeout)
    return 'on_timeout approve is not allowed on this worker (a call nobody answered would run; start it with --allow-approve-on-timeout to allow it, or leave on_timeout out: a timeout denies)';
  const wait = spec.approval_timeout === undefined ? undefined : parseDuration(spec.approval_timeout);
  if (wait !== undefined && wait > allow.maxApprovalWaitMs)
    return `approval_timeout ${spec.approval_timeout} is longer than this worker lets a call wait for approval (${shortDuration(allow.maxApprovalWaitMs)}; start it with --max-approval-wait ${spec.approval_timeout} to allow it)`;
  const baseUrl = spec.sql_eval?.base_url;
  if (baseUrl !== undefined && baseUrl.trim() !== '') {
    const target = normalEndpoint(baseUrl.trim());
    if (target === undefined)
      return `sql_eval.base_url '${baseUrl}' is not an http(s) URL without credentials, query or fragment`;
    if (target !== allow.ownEndpoint && !allow.endpoints.some((entry) => endpointCovers(entry, target)))
      return `sql_eval.base_url ${target} is not an endpoint this worker allows (${allow.endpoints.length === 0 ? 'it allows none but its own' : allow.endpoints.join(', ')}; start it with --allow-endpoint to allow one): the worker never sends its key to an endpoint it did not configure`;
  }
  return undefined;
}

/** The spec a worker runs: the task's own, with the profile made explicit (the first allowed one when it names none). */
export function allowedSpec(spec: TaskSpec, allow: TaskAllowlist): TaskSpec {
  return spec.profile !== undefined || spec.sql_eval !== undefined ? spec : { ...spec, profile: allow.profiles[0]! };
}

/** Whether an endpoint may receive the worker's key under this allowlist (its own, or an allowed one). */
export function endpointAllowed(url: string, allow: Pick<TaskAllowlist, 'endpoints' | 'ownEndpoint'>): boolean {
  const target = normalEndpoint(url.trim());
  return (
    target !== undefined &&
    (target === allow.ownEndpoint || allow.endpoints.some((entry) => endpointCovers(entry, target)))
  );
}

/** `scheme://host:port/path` without a trailing slash, or undefined for what is not a plain http(s) URL. */
export function normalEndpoint(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') return undefined;
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** Whether an allowed endpoint covers a target: the same origin, and the target's path at or below the entry's. */
function endpointCovers(entry: string, target: string): boolean {
  return target === entry || target.startsWith(`${entry}/`);
}

function sameProfile(entry: string, asked: string, cwd: string): boolean {
  if (entry === asked) return true;
  const looksLikePath = (value: string) => value.includes('/') || /\.ya?ml$/i.test(value);
  if (!looksLikePath(entry) || !looksLikePath(asked)) return false;
  return realOrLexical(resolve(cwd, entry)) === realOrLexical(resolve(cwd, asked));
}

/** The real path, or for a path that does not exist, its deepest existing ancestor's real path with the rest appended. */
function realOrLexical(path: string): string {
  if (!isAbsolute(path)) return path;
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      const real = realpathSync(current);
      return missing.length === 0 ? real : resolve(real, ...missing);
    } catch {
      const parent = resolve(current, '..');
      if (parent === current) return path;
      missing.unshift(current.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
      current = parent;
    }
  }
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values.map((value) => value.trim()))];
}

/** A duration for a message: `90s`, `45m`, `2h` (the largest whole unit). */
export function shortDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s % 3600 === 0) return `${s / 3600}h`;
  if (s % 60 === 0) return `${s / 60}m`;
  return `${s}s`;
}
