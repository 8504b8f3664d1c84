import { basename, posix } from 'node:path';
import { BackendUnavailableError, ConfigError } from '@rho/core';
import type { BackendFactory } from '@rho/core/backend-registry';
import { createDaytonaBackend } from './daytona-backend.js';
import { DaytonaBackendError } from './errors.js';
import type { DaytonaBackendOptions } from './options.js';

/** The options `backend: {name: daytona, ...}` takes in an agent config, as written in YAML. */
const OPTION_KEYS = [
  'image',
  'snapshot',
  'dockerfile',
  'keep_sandbox',
  'upload',
  'working_dir',
  'network',
  'env',
  'target',
  'labels',
  'create_timeout',
] as const;

/**
 * The `daytona` backend's factory, for a backend registry: file and shell tools run in a Daytona
 * cloud sandbox. Options (YAML, all optional): `image`, `snapshot` or `dockerfile` (at most one;
 * none: Daytona's default snapshot), `keep_sandbox` (default false: the sandbox is deleted when
 * the session closes), `upload` (true: copy the local working directory into the sandbox's
 * working directory first), `working_dir` (in the sandbox; default
 * `/home/daytona/<name of the local working directory>`), `network` (default: what the profile
 * grants, which is none: `networkBlockAll`), `env` (variables set in the sandbox), `target`
 * (region), `labels`, `create_timeout` (seconds). Credentials: `DAYTONA_API_KEY`,
 * `DAYTONA_API_URL`, `DAYTONA_TARGET` of rho's environment.
 *
 * Every problem (bad options, no key, Daytona refusing) is a `BackendUnavailableError`: exit 2,
 * before the first model call.
 */
export const daytonaBackendFactory: BackendFactory = {
  name: 'daytona',
  description: 'tools run in a Daytona cloud sandbox (needs DAYTONA_API_KEY)',
  async create(context) {
    const options = context.options;
    const where = context.origin === undefined ? '' : ` (${context.origin})`;
    const fail = (key: string, expected: string): never => {
      throw new BackendUnavailableError({
        backend: 'daytona',
        field: `backend.${key}`,
        message: `Backend 'daytona'${where}: '${key}' must be ${expected} (got ${JSON.stringify(options[key])}).`,
      });
    };
    for (const key of Object.keys(options)) {
      if (!(OPTION_KEYS as readonly string[]).includes(key)) {
        throw new BackendUnavailableError({
          backend: 'daytona',
          field: `backend.${key}`,
          message: `Backend 'daytona'${where} has no option '${key}': it takes ${OPTION_KEYS.join(', ')}.`,
        });
      }
    }
    const text = (key: string): string | undefined => {
      const value = options[key];
      if (value === undefined || value === null) return undefined;
      if (typeof value !== 'string' || value === '') fail(key, 'a non-empty string');
      return value as string;
    };
    const flag = (key: string): boolean | undefined => {
      const value = options[key];
      if (value === undefined || value === null) return undefined;
      if (typeof value !== 'boolean') fail(key, 'true or false');
      return value as boolean;
    };
    const mapping = (key: string): Record<string, string> | undefined => {
      const value = options[key];
      if (value === undefined || value === null) return undefined;
      if (
        typeof value !== 'object' ||
        Array.isArray(value) ||
        Object.values(value).some((item) => typeof item !== 'string')
      ) {
        fail(key, 'a mapping of names to strings');
      }
      return value as Record<string, string>;
    };
    const createTimeout = options['create_timeout'];
    if (createTimeout !== undefined && (typeof createTimeout !== 'number' || !(createTimeout > 0))) {
      fail('create_timeout', 'a number of seconds above 0');
    }
    const workingDir = text('working_dir') ?? posix.join('/home/daytona', basename(context.workingDir) || 'work');
    const network = flag('network') ?? context.access.network;
    const image = text('image');
    const snapshot = text('snapshot');
    const dockerfile = text('dockerfile');
    const target = text('target');
    const env = mapping('env');
    const labels = mapping('labels');
    const daytonaOptions: DaytonaBackendOptions = {
      environment: context.env,
      workingDir,
      network,
      keepSandbox: flag('keep_sandbox') ?? false,
      ...(image === undefined ? {} : { image }),
      ...(snapshot === undefined ? {} : { snapshot }),
      ...(dockerfile === undefined ? {} : { dockerfile }),
      ...(target === undefined ? {} : { target }),
      ...(env === undefined ? {} : { sandboxEnv: env }),
      ...(labels === undefined ? {} : { labels }),
      ...(typeof createTimeout === 'number' ? { createTimeoutSeconds: createTimeout } : {}),
      ...(flag('upload') === true ? { uploads: [{ local: context.workingDir, remote: workingDir }] } : {}),
    };
    try {
      return await createDaytonaBackend(daytonaOptions);
    } catch (error) {
      if (ConfigError.isInstance(error) || DaytonaBackendError.isInstance(error)) {
        throw new BackendUnavailableError({
          backend: 'daytona',
          message: `Backend 'daytona'${where}: ${error.message}`,
          ...(ConfigError.isInstance(error) && error.field !== undefined ? { field: error.field } : {}),
          cause: error,
        });
      }
      throw error;
    }
  },
};
