import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { BackendUnavailableError, rhoHome } from '@rho/core';
import type { BackendFactory } from '@rho/core/backend-registry';
import { parseByteSize } from '@rho/permissions';
import { createSandboxBackend, type SandboxBackendOptions } from './sandbox-backend.js';

/** The options `backend: {name: sandbox, ...}` takes in an agent config, as written in YAML. */
const OPTION_KEYS = [
  'network',
  'working_dir',
  'max_processes',
  'max_file_bytes',
  'max_memory',
  'tmp_size',
  'env',
  'hide',
] as const;

/**
 * The `sandbox` backend's factory, for a backend registry. Options (YAML, all optional):
 * `network` (true/false, default: what the profile grants, which is none), `working_dir`
 * (`read-write` or `read-only`, default: read-write when the profile may change files),
 * `max_processes` (default 256), `max_file_bytes` (default 1 GiB), `max_memory` (the whole
 * container's memory, /tmp included: bytes or `512M`, `2G`; default 2 GiB), `tmp_size` (the
 * private /tmp; default 256 MiB), `env` (variables added to the
 * clean environment), `hide` (more directories to hide; rho's home always is).
 */
export const sandboxBackendFactory: BackendFactory = {
  name: 'sandbox',
  description: 'tools run in a bubblewrap container on this machine (Linux, needs bubblewrap)',
  async create(context) {
    const options = context.options;
    const where = context.origin === undefined ? '' : ` (${context.origin})`;
    const fail = (key: string, expected: string): never => {
      throw new BackendUnavailableError({
        backend: 'sandbox',
        field: `backend.${key}`,
        message: `Backend 'sandbox'${where}: '${key}' must be ${expected} (got ${JSON.stringify(options[key])}).`,
      });
    };
    for (const key of Object.keys(options)) {
      if (!(OPTION_KEYS as readonly string[]).includes(key))
        throw new BackendUnavailableError({
          backend: 'sandbox',
          field: `backend.${key}`,
          message: `Backend 'sandbox'${where} has no option '${key}': it takes ${OPTION_KEYS.join(', ')}.`,
        });
    }
    const network = options['network'] ?? context.access.network;
    if (typeof network !== 'boolean') fail('network', 'true or false');
    const access = options['working_dir'] ?? context.access.workingDir;
    if (access !== 'read-write' && access !== 'read-only') fail('working_dir', 'read-write or read-only');
    const limit = (key: string): number | undefined => {
      const value = options[key];
      if (value === undefined) return undefined;
      if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) fail(key, 'a whole number above 0');
      return value as number;
    };
    const maxProcesses = limit('max_processes');
    const maxFileBytes = limit('max_file_bytes');
    const size = (key: string): number | undefined => {
      const value = options[key];
      if (value === undefined) return undefined;
      const bytes = parseByteSize(value);
      if (bytes === undefined) fail(key, 'a size: bytes, or a number with K, M, G or T such as 512M');
      return bytes;
    };
    const maxMemoryBytes = size('max_memory');
    const tmpBytes = size('tmp_size');
    const env = options['env'];
    if (
      env !== undefined &&
      (typeof env !== 'object' ||
        env === null ||
        Array.isArray(env) ||
        Object.values(env).some((value) => typeof value !== 'string'))
    )
      fail('env', 'a mapping of variable names to strings');
    const hide = options['hide'];
    if (hide !== undefined && (!Array.isArray(hide) || hide.some((item) => typeof item !== 'string')))
      fail('hide', 'a list of directories');
    const sandboxOptions: SandboxBackendOptions = {
      workingDir: context.workingDir,
      network: network as boolean,
      writable: access === 'read-write',
      // rho's home holds database passwords and other sessions' traces, the user's home their keys
      // (~/.ssh, ~/.aws, ~/.netrc, ...): never visible to the tools. A working directory inside
      // the home stays visible; the container's own home is an empty /tmp/home.
      hide: [rhoHome(context.env), ...userHomes(context.env), ...((hide as string[] | undefined) ?? [])],
      ...(maxProcesses === undefined ? {} : { maxProcesses }),
      ...(maxFileBytes === undefined ? {} : { maxFileBytes }),
      ...(maxMemoryBytes === undefined ? {} : { maxMemoryBytes }),
      ...(tmpBytes === undefined ? {} : { tmpBytes }),
      ...(env === undefined ? {} : { env: env as Record<string, string> }),
      ...(context.env['PATH'] === undefined ? {} : { searchPath: context.env['PATH'] }),
    };
    return createSandboxBackend(sandboxOptions);
  },
};

/**
 * The home directories of the user rho runs as (`$HOME` and the account's), never `/`. When the
 * working directory is the home itself it stays visible, as asked.
 */
function userHomes(env: Readonly<Record<string, string | undefined>>): string[] {
  const homes = new Set<string>();
  for (const candidate of [env['HOME'], safeHomedir()]) {
    if (candidate === undefined || candidate === '' || !isAbsolute(candidate)) continue;
    let home = resolve(candidate);
    try {
      home = realpathSync(home);
    } catch {
      continue;
    }
    if (home !== '/') homes.add(home);
  }
  return [...homes];
}

function safeHomedir(): string | undefined {
  try {
    return homedir();
  } catch {
    return undefined;
  }
}
