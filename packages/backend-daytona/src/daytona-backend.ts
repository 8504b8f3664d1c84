import { posix, resolve } from 'node:path';
import type { ExecutionBackend } from '@rho/core';
import type { CreateSandboxFromImageParams, CreateSandboxFromSnapshotParams, Daytona, Sandbox } from '@daytonaio/sdk';
import { DaytonaBackendError } from './errors.js';
import { RemoteFiles } from './internal/remote-files.js';
import { spawnRemote } from './internal/remote-process.js';
import { SandboxConnection } from './internal/sandbox-connection.js';
import { DEFAULT_SYNC_LIMITS, remoteNow, syncDown, type SyncLimits, type SyncSummary } from './internal/sync.js';
import { downloadPath, uploadPath, type TransferSummary } from './internal/transfer.js';
import {
  DEFAULT_CREATE_TIMEOUT_SECONDS,
  DEFAULT_SANDBOX_PATH,
  resolveDaytonaSettings,
  type DaytonaBackendOptions,
  type DaytonaSettings,
} from './options.js';

/** Minutes of inactivity after which a kept sandbox stops (Daytona's own default). */
export const KEPT_AUTO_STOP_MINUTES = 15;
/** How long `close()` waits for commands being killed or cleaned up before deleting the sandbox. */
const CLOSE_SETTLE_MS = 10_000;
/**
 * Milliseconds an API request may take, except transfers and commands, which the SDK gives their
 * own deadline (the SDK's default is a day: a hung service would hang rho).
 */
const REQUEST_TIMEOUT_MS = 120_000;

/** An {@link ExecutionBackend} on a Daytona sandbox, with what only a remote backend has. */
export interface DaytonaBackend extends ExecutionBackend {
  readonly name: 'daytona';
  /** Id of the sandbox (shown so a kept sandbox can be found again). */
  readonly sandboxId: string;
  /** The sandbox user's home directory (`/home/daytona` on Daytona's images). */
  readonly homeDirectory: string;
  /** The directory the tools work in, in the sandbox (created when missing). */
  readonly workingDir: string;
  /** Copies a local file or directory into the sandbox (relative remote paths: under the home directory). */
  upload(localPath: string, remotePath: string): Promise<TransferSummary>;
  /** Copies a file or directory of the sandbox to this machine. */
  download(remotePath: string, localPath: string): Promise<TransferSummary>;
  /**
   * Brings the working directory's changes back into `localRoot` (a copy of what was uploaded):
   * what changed in the sandbox since the uploads (or the last sync) is written there, what the
   * sandbox no longer has is removed (symbolic links and special files, which never travel,
   * stay). All or nothing: over `limits` (default 10,000 files, 512 MiB) or on a failed download
   * it throws {@link DaytonaBackendError} and changes nothing.
   */
  syncWorkingDir(localRoot: string, limits?: Partial<SyncLimits>): Promise<SyncSummary>;
  /**
   * Stops what is still running, deletes the sandbox unless `keepSandbox` was set, and releases
   * the SDK client. Idempotent; never throws for a sandbox that is already gone.
   */
  close(): Promise<void>;
}

/**
 * Creates a Daytona sandbox (from Daytona's default snapshot, an image, a snapshot or a local
 * Dockerfile), waits until it has started, uploads what `uploads` asks for, and returns the
 * backend on it. `@daytonaio/sdk` is loaded here, on first use, not when this package is imported.
 *
 * Throws `ConfigError` for options that cannot work (no API key, two image sources, a missing
 * Dockerfile) before contacting anyone, and {@link DaytonaBackendError} when Daytona refuses
 * (a wrong key: status 401) or the sandbox does not start in time; a sandbox created before a
 * failure is deleted.
 */
export async function createDaytonaBackend(options: DaytonaBackendOptions = {}): Promise<DaytonaBackend> {
  const settings = resolveDaytonaSettings(options);
  const sdk = await import('@daytonaio/sdk');
  const daytona = new sdk.Daytona({
    apiKey: settings.apiKey,
    apiUrl: settings.apiUrl,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    ...(settings.target === undefined ? {} : { target: settings.target }),
  });
  let sandbox: Sandbox | undefined;
  try {
    sandbox = await daytona.create(createParams(sdk.Image, settings, options), {
      timeout: options.createTimeoutSeconds ?? DEFAULT_CREATE_TIMEOUT_SECONDS,
    });
    const homeDirectory = (await sandbox.getUserHomeDir()) ?? '/home/daytona';
    const path = options.sandboxEnv?.['PATH'] ?? DEFAULT_SANDBOX_PATH;
    const connection = new SandboxConnection(sandbox, homeDirectory, path, options.pollIntervalMs ?? 100);
    await requirePrograms(connection);
    const workingDir = posix.resolve(homeDirectory, options.workingDir ?? homeDirectory);
    const syncedAt = { value: '0' };
    const backend = backendOn(daytona, connection, syncedAt, {
      keepSandbox: options.keepSandbox ?? false,
      workingDir,
      network: options.network ?? true,
      environment: { PATH: path, HOME: homeDirectory, ...options.sandboxEnv },
    });
    await backend.mkdir(workingDir, { recursive: true });
    for (const upload of options.uploads ?? []) {
      await backend.upload(upload.local, upload.remote);
    }
    // What the agent changes from here on is what a sync brings back.
    syncedAt.value = await remoteNow(connection, workingDir);
    return backend;
  } catch (error) {
    if (sandbox !== undefined && !options.keepSandbox) await sandbox.delete().catch(() => undefined);
    await daytona[Symbol.asyncDispose]().catch(() => undefined);
    throw backendError(error, settings);
  }
}

function createParams(
  image: typeof import('@daytonaio/sdk').Image,
  settings: DaytonaSettings,
  options: DaytonaBackendOptions,
): CreateSandboxFromImageParams | CreateSandboxFromSnapshotParams {
  const base = {
    envVars: { PATH: DEFAULT_SANDBOX_PATH, ...options.sandboxEnv },
    labels: { rho: 'true', ...options.labels },
    // The original's setting: the sandbox does not stop while the agent thinks.
    autoStopInterval: 0,
    ...(options.network === false ? { networkBlockAll: true } : {}),
  };
  switch (settings.source.kind) {
    case 'default':
      return base;
    case 'snapshot':
      return { ...base, snapshot: settings.source.snapshot };
    case 'image':
      return { ...base, image: settings.source.image };
    case 'dockerfile':
      return { ...base, image: image.fromDockerfile(settings.source.path) };
  }
}

function backendOn(
  daytona: Daytona,
  connection: SandboxConnection,
  syncedAt: { value: string },
  settings: { keepSandbox: boolean; workingDir: string; network: boolean; environment: Record<string, string> },
): DaytonaBackend {
  const { keepSandbox } = settings;
  const files = new RemoteFiles(connection);
  const home = connection.homeDir;
  const remote = (path: string): string => (posix.isAbsolute(path) ? path : posix.join(home, path));
  let closing: Promise<void> | undefined;
  return {
    name: 'daytona',
    sandboxId: connection.sandbox.id,
    homeDirectory: home,
    workingDir: settings.workingDir,
    isolation: {
      description: 'Daytona cloud sandbox',
      network: settings.network,
      workingDir: 'read-write',
      environment: settings.environment,
    },
    spawn: (spawnOptions) => spawnRemote(connection, spawnOptions),
    ripgrepPath: async () => 'rg',
    stat: (path) => files.stat(path, true),
    lstat: (path) => files.stat(path, false),
    realpath: (path) => files.realpath(path),
    readlink: (path) => files.readlink(path),
    readdir: (path) => files.readdir(path),
    homeDir: async () => home,
    openRead: (path) => files.openRead(path),
    readFile: (path, readOptions) => files.readFile(path, readOptions.maxBytes),
    writeFileAtomic: (path, data) => files.writeFileAtomic(path, data),
    createExclusive: (path, data) => files.createExclusive(path, data),
    mkdir: (path, mkdirOptions) => files.mkdir(path, mkdirOptions?.recursive ?? false),
    upload: (localPath, remotePath) => uploadPath(connection, resolve(localPath), remote(remotePath)),
    download: (remotePath, localPath) => downloadPath(connection, remote(remotePath), resolve(localPath)),
    async syncWorkingDir(localRoot, limits) {
      const summary = await syncDown(connection, settings.workingDir, resolve(localRoot), syncedAt.value, {
        ...DEFAULT_SYNC_LIMITS,
        ...limits,
      });
      syncedAt.value = summary.listedAt;
      return summary;
    },
    close() {
      closing ??= (async () => {
        // Loops (polls, kills) stop at their next step; what they are doing is given a moment.
        connection.closed = true;
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          connection.settle(),
          new Promise((resolve) => {
            timer = setTimeout(resolve, CLOSE_SETTLE_MS);
          }),
        ]);
        clearTimeout(timer);
        if (keepSandbox) {
          for (const session of connection.sessions) {
            await connection.sandbox.process.deleteSession(session).catch(() => undefined);
          }
          // Kept, not left running for ever: it stops (keeping its files) after idle minutes.
          await connection.sandbox.setAutostopInterval(KEPT_AUTO_STOP_MINUTES).catch(() => undefined);
        } else {
          await connection.sandbox.delete().catch((error: unknown) => {
            if ((error as { statusCode?: number }).statusCode !== 404) throw backendError(error);
          });
        }
        await daytona[Symbol.asyncDispose]().catch(() => undefined);
      })();
      return closing;
    },
  };
}

/**
 * What the backend runs in the sandbox besides the tools' own commands: `setsid --wait` (util-linux)
 * to give each command a process group to kill, coreutils and `find` for metadata and transfers.
 */
const REQUIRED_PROGRAMS = [
  'sh',
  'setsid',
  'kill',
  'stat',
  'realpath',
  'readlink',
  'ln',
  'base64',
  'tail',
  'head',
  'find',
];

/** Fails with what is missing when the sandbox's image lacks a program the backend needs. */
async function requirePrograms(connection: SandboxConnection): Promise<void> {
  const result = await connection.exec(
    `for p in ${REQUIRED_PROGRAMS.join(' ')}; do command -v "$p" > /dev/null 2>&1 || echo "$p"; done; ` +
      `setsid --wait true > /dev/null 2>&1 || echo 'setsid --wait'; echo checked`,
  );
  const lines = result.output.split('\n').filter((line) => line !== '');
  const missing = lines.filter((line) => line !== 'checked');
  if (lines.at(-1) !== 'checked' || missing.length > 0) {
    throw new DaytonaBackendError({
      code: 'daytona_image_unsupported',
      message:
        `the sandbox's image lacks what the daytona backend runs: ${missing.length > 0 ? [...new Set(missing)].join(', ') : result.output.trim()}. ` +
        'Use an image with coreutils, findutils and util-linux (Debian- and Ubuntu-based images have them)',
    });
  }
}

/** A Daytona failure as a {@link DaytonaBackendError} that says what to check. */
function backendError(error: unknown, settings?: DaytonaSettings): unknown {
  if (!(error instanceof Error) || DaytonaBackendError.isInstance(error)) return error;
  if ((error as { code?: unknown }).code === 'config_error' || error.name === 'ConfigError') return error;
  const statusCode = (error as { statusCode?: number }).statusCode;
  let hint = '';
  if (statusCode === 401 || statusCode === 403) {
    hint = ' Check DAYTONA_API_KEY (and DAYTONA_API_URL for a self-hosted Daytona).';
  } else if (statusCode === undefined && settings !== undefined) {
    hint = ` Is the Daytona API reachable at ${settings.apiUrl}?`;
  }
  return new DaytonaBackendError({
    message: `Daytona: ${error.message}.${hint}`,
    statusCode,
    cause: error,
  });
}
