import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError } from '@rho/core';

/** The Daytona API the SDK talks to when `DAYTONA_API_URL` is not set. */
export const DEFAULT_DAYTONA_API_URL = 'https://app.daytona.io/api';
/** Seconds to wait for a sandbox to be created and started (the original's 120 s). */
export const DEFAULT_CREATE_TIMEOUT_SECONDS = 120;
/**
 * `PATH` of commands run in the sandbox, under the sandbox's own environment (the original's
 * default: where `uv` and user-installed tools land first).
 */
export const DEFAULT_SANDBOX_PATH = '/home/daytona/.local/bin:/usr/local/bin:/usr/bin:/bin';

/** Options of {@link createDaytonaBackend}. */
export interface DaytonaBackendOptions {
  /** API key; defaults to `DAYTONA_API_KEY` of `environment`. Required. */
  apiKey?: string;
  /** API URL; defaults to `DAYTONA_API_URL`, else {@link DEFAULT_DAYTONA_API_URL}. */
  apiUrl?: string;
  /** Target region; defaults to `DAYTONA_TARGET`, else the organisation's default. */
  target?: string;
  /** Where the `DAYTONA_*` variables are read (default `process.env`). */
  environment?: Readonly<Record<string, string | undefined>>;
  /**
   * What the sandbox is made from: at most one of an image (`python:3.12`), a snapshot name or a
   * local Dockerfile (built by Daytona). None: Daytona's default snapshot.
   */
  image?: string;
  /** Name of a Daytona snapshot to create the sandbox from. */
  snapshot?: string;
  /** Path of a local Dockerfile that Daytona builds the sandbox's image from. */
  dockerfile?: string;
  /** Environment variables set in the sandbox (over the default `PATH`). */
  sandboxEnv?: Readonly<Record<string, string>>;
  /** Labels put on the sandbox (`rho: "true"` is always added). */
  labels?: Readonly<Record<string, string>>;
  /**
   * Local directories or files uploaded when the sandbox is created, each to `remote` (a path in
   * the sandbox; relative paths are under the sandbox user's home directory).
   */
  uploads?: readonly { local: string; remote: string }[];
  /**
   * The directory the tools work in, in the sandbox (relative: under the home directory); created
   * when missing. Default: the home directory.
   */
  workingDir?: string;
  /** Whether processes may reach the network (default true; false sets Daytona's `networkBlockAll`). */
  network?: boolean;
  /** Keep the sandbox when the backend is closed (default: delete it). */
  keepSandbox?: boolean;
  /** Seconds to wait for the sandbox to start (default {@link DEFAULT_CREATE_TIMEOUT_SECONDS}). */
  createTimeoutSeconds?: number;
  /** Milliseconds between two looks at a running command (default 100, growing to 1000). */
  pollIntervalMs?: number;
}

/** Where the sandbox comes from, once the options were checked. */
export type SandboxSource =
  | { kind: 'default' }
  | { kind: 'image'; image: string }
  | { kind: 'snapshot'; snapshot: string }
  | { kind: 'dockerfile'; path: string };

/** The checked settings of a Daytona backend: what {@link resolveDaytonaSettings} returns. */
export interface DaytonaSettings {
  /** The API key (never printed). */
  apiKey: string;
  /** The API URL. */
  apiUrl: string;
  /** The target region, if one was given. */
  target: string | undefined;
  /** What the sandbox is made from. */
  source: SandboxSource;
}

/**
 * Checks the options without contacting Daytona, so a mistake is reported before anything is
 * created or any model is called: exactly one source of credentials and at most one of `image`,
 * `snapshot` and `dockerfile` (which must exist). Throws a `ConfigError` saying what to fix.
 */
export function resolveDaytonaSettings(options: DaytonaBackendOptions): DaytonaSettings {
  const environment = options.environment ?? process.env;
  const sources = (['image', 'snapshot', 'dockerfile'] as const).filter(
    (key) => options[key] !== undefined && options[key] !== '',
  );
  if (sources.length > 1) {
    throw new ConfigError({
      code: 'daytona_source_conflict',
      field: sources.join(', '),
      message: `Cannot use both ${sources.map((key) => `--${key}`).join(' and ')}: a Daytona sandbox is made from one image, snapshot or Dockerfile.`,
    });
  }
  const apiKey = options.apiKey ?? nonEmpty(environment['DAYTONA_API_KEY']);
  if (apiKey === undefined || apiKey === '') {
    throw new ConfigError({
      code: 'daytona_api_key_missing',
      field: 'DAYTONA_API_KEY',
      message:
        'The daytona backend needs a Daytona API key: set DAYTONA_API_KEY (create one at https://app.daytona.io/dashboard/keys), or choose another backend with --backend local.',
    });
  }
  const apiUrl = options.apiUrl ?? nonEmpty(environment['DAYTONA_API_URL']) ?? DEFAULT_DAYTONA_API_URL;
  let parsed: URL | undefined;
  try {
    parsed = new URL(apiUrl);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) {
    throw new ConfigError({
      code: 'daytona_api_url_invalid',
      field: 'DAYTONA_API_URL',
      message: `DAYTONA_API_URL is not an http(s) URL: ${JSON.stringify(apiUrl)} (for example ${DEFAULT_DAYTONA_API_URL}).`,
    });
  }
  const target = options.target ?? nonEmpty(environment['DAYTONA_TARGET']);
  return { apiKey, apiUrl, target, source: sourceOf(options) };
}

function sourceOf(options: DaytonaBackendOptions): SandboxSource {
  if (options.snapshot) return { kind: 'snapshot', snapshot: options.snapshot };
  if (options.image) return { kind: 'image', image: options.image };
  if (options.dockerfile) {
    const path = resolve(options.dockerfile);
    let isFile: boolean;
    try {
      isFile = statSync(path).isFile();
    } catch {
      isFile = false;
    }
    if (!isFile) {
      throw new ConfigError({
        code: 'daytona_dockerfile_missing',
        field: 'dockerfile',
        file: path,
        message: `Dockerfile not found: ${path}`,
      });
    }
    return { kind: 'dockerfile', path };
  }
  return { kind: 'default' };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
