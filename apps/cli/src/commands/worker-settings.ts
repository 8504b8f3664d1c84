import { configSource, validateConfig, type ConfigPath, type ConfigSource } from '@rho/core/internal';
import type { TaskAllowlistOptions } from '@rho/queue';
import * as v from 'valibot';

const WORKER_KEYS = ['allow_profiles', 'allow_dirs', 'allow_endpoints'] as const;

const entries = v.optional(
  v.nullable(
    v.array(
      v.pipe(
        v.string('must be a non-empty string'),
        v.check((entry) => entry.trim() !== '', 'must be a non-empty string'),
      ),
      'must be a list of non-empty strings',
    ),
  ),
);

const workerSchema = v.pipe(
  v.unknown(),
  v.check(
    (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
    'must be a mapping such as {allow_profiles: [readonly], allow_dirs: [/srv/work]}',
  ),
  v.strictObject(
    { allow_profiles: entries, allow_dirs: entries, allow_endpoints: entries },
    `is an unknown key (worker knows ${WORKER_KEYS.join(', ')})`,
  ),
);

/**
 * The `worker:` mapping of `$RHO_HOME/config.yaml` (`allow_profiles`, `allow_dirs`,
 * `allow_endpoints`), validated, as allowlist options; what it does not set is absent.
 *
 * @throws ConfigError `FILE:LINE: 'worker.KEY' must be ... (got ...).`, the line when `source`
 * is the document the mapping was read from (`at` is where it is in it).
 */
export function workerSettings(
  value: unknown,
  source: Pick<ConfigSource, 'file' | 'lineOf'> | string,
  at: ConfigPath = ['worker'],
): TaskAllowlistOptions {
  if (value === undefined || value === null) return {};
  const settings = validateConfig(
    workerSchema,
    value,
    typeof source === 'string' ? configSource(value, source) : source,
    at,
  );
  const list = (entries: string[] | null | undefined) =>
    entries === undefined || entries === null ? undefined : entries;
  const profiles = list(settings.allow_profiles);
  const dirs = list(settings.allow_dirs);
  const endpoints = list(settings.allow_endpoints);
  return {
    ...(profiles === undefined ? {} : { profiles }),
    ...(dirs === undefined ? {} : { dirs }),
    ...(endpoints === undefined ? {} : { endpoints }),
  };
}
