import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync, realpathSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BackendStoppedError,
  BackendUnavailableError,
  type ExecutionBackend,
  type FileInfo,
  type BackendProcess,
  type ReadHandle,
} from '@rho/core';
import {
  createLimitCgroup,
  formatBytes,
  sandboxWrapper,
  type LimitCgroup,
  type SandboxWrapper,
} from '@rho/permissions';
import { bubblewrapBoundsTmpfs } from '@rho/permissions/internal';
import { ServerConnection } from './internal/server-connection.js';

/** Options of {@link createSandboxBackend}. */
export interface SandboxBackendOptions {
  /** The working directory: bound into the container at the same path. */
  workingDir: string;
  /** Whether the working directory is writable (default true); the rest of the system is always read-only. */
  writable?: boolean;
  /** Whether processes reach the network (default false: a network namespace with only its own loopback). */
  network?: boolean;
  /** Most processes at once in the container, the server included (default 256). */
  maxProcesses?: number;
  /** Largest file a process may write, in bytes (RLIMIT_FSIZE; default 1 GiB). */
  maxFileBytes?: number;
  /**
   * Most memory of the whole container, the server and /tmp included, in bytes (default 2 GiB): a
   * memory cgroup where one can be made, else RLIMIT_AS on each process the tools start.
   */
  maxMemoryBytes?: number;
  /** Size of the container's private /tmp (a tmpfs, counted in the memory limit), in bytes (default 256 MiB). */
  tmpBytes?: number;
  /**
   * Variables added to the container's clean environment (which has only `PATH`, `HOME`, `LANG`,
   * `TMPDIR` and `TERM`); nothing of rho's own environment is passed.
   */
  env?: Readonly<Record<string, string>>;
  /**
   * Directories hidden inside the container (an empty read-only tmpfs over each), for example
   * rho's home with its database passwords. A working directory inside one stays visible.
   */
  hide?: readonly string[];
  /** Where to look for `bwrap` and `prlimit`, `PATH`-style (default `process.env.PATH`). */
  searchPath?: string;
}

/** Limits and isolation of a running sandbox backend, as it reports them. */
export interface SandboxBackend extends ExecutionBackend {
  readonly name: 'sandbox';
  /** What holds the process limit: a pids cgroup, RLIMIT_NPROC (not binding for root), or nothing. */
  readonly processLimit: 'cgroup' | 'rlimit' | 'none';
  /** What holds the memory limit: a memory cgroup (the whole container), RLIMIT_AS (each tool's process), or nothing. */
  readonly memoryLimit: 'cgroup' | 'rlimit' | 'none';
  close(): Promise<void>;
}

/** The clean `PATH` inside the container. */
const CONTAINER_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** The container's home: private, writable, empty, gone with the container. */
const CONTAINER_HOME = '/tmp/home';

/**
 * The `sandbox` execution backend: every file and shell tool runs inside one bubblewrap container
 * made for the session. A small server (a Node script shipped in this package) is started inside
 * it and does each file operation and starts each process on request, so paths resolve in the
 * container's mount namespace: the working directory is bound read-write (or read-only), the
 * rest of the system read-only, /tmp and the home private; there is no network unless asked,
 * no capability, a PID namespace of its own (nothing of rho's processes is visible), a clean
 * environment, and limits on processes and file size. `close()` ends the container and with it
 * every process that is still running; so does rho's exit, however it happens.
 * @throws BackendUnavailableError when bubblewrap is missing or cannot make a container here.
 */
export async function createSandboxBackend(options: SandboxBackendOptions): Promise<SandboxBackend> {
  const lookup = options.searchPath === undefined ? {} : { searchPath: options.searchPath };
  const wrapper: SandboxWrapper = await sandboxWrapper(lookup);
  if (!wrapper.available) {
    throw new BackendUnavailableError({
      backend: 'sandbox',
      message: `Backend 'sandbox' is not available: ${wrapper.unavailableReason ?? 'no bubblewrap'} Or choose --backend local.`,
    });
  }
  let workingDir: string;
  try {
    workingDir = realpathSync(options.workingDir);
  } catch {
    throw new BackendUnavailableError({
      backend: 'sandbox',
      message: `Backend 'sandbox': the working directory ${options.workingDir} does not exist.`,
    });
  }
  const maxProcesses = options.maxProcesses ?? 256;
  const maxFileBytes = options.maxFileBytes ?? 1024 ** 3;
  const maxMemoryBytes = options.maxMemoryBytes ?? DEFAULT_MAX_MEMORY_BYTES;
  const tmpBytes = options.tmpBytes ?? DEFAULT_TMP_BYTES;
  const network = options.network ?? false;
  const writable = options.writable ?? true;
  const searchPath = options.searchPath ?? process.env['PATH'] ?? '';
  const prlimit = findOnPath('prlimit', searchPath);
  const server = serverScript();
  const rgPath = await bundledRipgrep();
  // A cgroup holds the processes (RLIMIT_NPROC does not bind root) and the memory of the whole
  // container, /tmp included, where one can be made.
  const cgroup: LimitCgroup | undefined = createLimitCgroup({ pids: maxProcesses, memoryBytes: maxMemoryBytes });
  // Without a memory cgroup, each process a tool starts gets RLIMIT_AS (not the server: Node
  // reserves more address space than it uses).
  const processPrefix =
    cgroup?.memory !== true && prlimit !== undefined ? [prlimit, `--as=${maxMemoryBytes}`, '--'] : [];
  const inner = [
    ...(prlimit === undefined ? [] : [prlimit, `--nproc=${maxProcesses}`, `--fsize=${maxFileBytes}`, '--core=0', '--']),
    process.execPath,
    server,
    ...(processPrefix.length === 0 ? [] : [JSON.stringify(processPrefix)]),
  ];
  const environment: Record<string, string> = {
    PATH: CONTAINER_PATH,
    HOME: CONTAINER_HOME,
    LANG: 'C.UTF-8',
    TMPDIR: '/tmp',
    TERM: 'dumb',
    ...options.env,
  };
  const argv = wrapper.wrap(inner, {
    cwd: workingDir,
    allowNetwork: network,
    writableCwd: writable,
    env: environment,
    tmpDirs: [CONTAINER_HOME],
    hide: options.hide ?? [],
    // Node and the server's packages may live under /tmp (a Node from a tarball, a clone in a
    // temporary directory), which the container replaces with its own: bound read-only again.
    readOnlyBinds: [...serverRuntimePaths(server), ...(isAbsolute(rgPath) ? [rgPath] : [])],
    limits: {
      outer:
        cgroup === undefined
          ? []
          : [
              '/bin/sh',
              '-c',
              'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"',
              'rho-limits',
              ...cgroup.procsFiles,
              '--',
            ],
      // The container's /tmp: a tmpfs of tmp_size, counted in the container's memory cgroup.
      tmp: [
        ...(wrapper.program !== undefined && bubblewrapBoundsTmpfs(wrapper.program)
          ? ['--size', String(tmpBytes)]
          : []),
        '--tmpfs',
        '/tmp',
      ],
      inner: [],
    },
  });
  const command = argv;
  // An empty environment for bubblewrap itself too: it is the container's init (PID 1), whose
  // /proc/1/environ every process inside can read.
  const child = spawn(command[0]!, command.slice(1), { stdio: ['pipe', 'pipe', 'pipe'], env: {} });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    if (stderr.length < 4000) stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const connection = new ServerConnection(
    child,
    () => stderr.trim().split('\n').slice(0, 3).join(' ') || 'the container exited',
  );
  let ready: { home: string; pid: number };
  try {
    ready = await connection.ready;
  } catch (error) {
    await cgroup?.remove();
    throw new BackendUnavailableError({
      backend: 'sandbox',
      message: `Backend 'sandbox' could not start its container: ${(error as Error).message}. Or choose --backend local.`,
      cause: error,
    });
  }
  let closing: Promise<void> | undefined;
  const call = <T>(request: Parameters<ServerConnection['call']>[0]) => connection.call<T>(request);
  const backend: SandboxBackend = {
    name: 'sandbox',
    processLimit:
      cgroup?.pids === true ? 'cgroup' : prlimit !== undefined && process.getuid?.() !== 0 ? 'rlimit' : 'none',
    memoryLimit: cgroup?.memory === true ? 'cgroup' : processPrefix.length > 0 ? 'rlimit' : 'none',
    isolation: {
      description: `bubblewrap container (${wrapper.description})`,
      network,
      workingDir: writable ? 'read-write' : 'read-only',
      environment,
    },
    stopped() {
      const gone = connection.stoppedBecause;
      // Closed on purpose (the session ended): not a failure of the run.
      if (gone === undefined || closing !== undefined) return undefined;
      return new BackendStoppedError({
        backend: 'sandbox',
        message: `The sandbox backend's container stopped during the run (${gone.message}); nothing more can run in it. Resume the session to start a new container.`,
        cause: gone,
      });
    },
    spawn: (spawnOptions) => {
      const started = connection.spawn(spawnOptions);
      return cgroup?.memory === true ? reportingMemory(started, cgroup, maxMemoryBytes) : started;
    },
    ripgrepPath: bundledRipgrep,
    stat: (path) => call<FileInfo>({ op: 'stat', path }),
    lstat: (path) => call<FileInfo>({ op: 'lstat', path }),
    realpath: (path) => call<string>({ op: 'realpath', path }),
    readlink: (path) => call<string>({ op: 'readlink', path }),
    readdir: (path) => call<string[]>({ op: 'readdir', path }),
    homeDir: async () => ready.home,
    async openRead(path): Promise<ReadHandle> {
      const opened = await call<{ handle: number; size: number }>({ op: 'open', path });
      return {
        size: opened.size,
        async read(buffer, position, length) {
          const data = Buffer.from(
            await call<string>({
              op: 'read',
              handle: opened.handle,
              position,
              length: Math.min(length, buffer.byteLength),
            }),
            'base64',
          );
          buffer.set(data);
          return data.byteLength;
        },
        close: () => call<void>({ op: 'close', handle: opened.handle }),
      };
    },
    readFile: async (path, readOptions) =>
      Buffer.from(await call<string>({ op: 'readFile', path, maxBytes: readOptions.maxBytes }), 'base64'),
    writeFileAtomic: (path, data) =>
      call<void>({ op: 'writeFileAtomic', path, data: Buffer.from(data).toString('base64') }),
    createExclusive: (path, data) =>
      call<void>({ op: 'createExclusive', path, data: Buffer.from(data).toString('base64') }),
    mkdir: (path, mkdirOptions) => call<void>({ op: 'mkdir', path, recursive: mkdirOptions?.recursive ?? false }),
    close() {
      closing ??= (async () => {
        // The outer bwrap is this process's child; its death takes the container's init with it,
        // and the kernel ends every process of the container's PID namespace.
        child.kill('SIGKILL');
        await exited;
        await cgroup?.remove();
      })();
      return closing;
    },
  };
  return backend;
}

/** The container's memory limit when the options set none. */
const DEFAULT_MAX_MEMORY_BYTES = 2 * 1024 ** 3;
/** The size of the container's /tmp when the options set none. */
const DEFAULT_TMP_BYTES = 256 * 1024 ** 2;

/**
 * The process with its exit saying so when the container's memory cgroup killed a process while
 * it ran (the kernel's OOM killer chooses the largest process: the one that grew).
 */
function reportingMemory(started: BackendProcess, cgroup: LimitCgroup, maxMemoryBytes: number): BackendProcess {
  const before = cgroup.events().oomKills;
  const exited = started.exited.then((exit) =>
    cgroup.events().oomKills > before
      ? {
          ...exit,
          limitReached: `memory limit reached (${formatBytes(maxMemoryBytes)}): a process of the sandbox was killed; the backend's max_memory sets it`,
        }
      : exit,
  );
  const process: BackendProcess = {
    get pid() {
      return started.pid;
    },
    stdout: started.stdout,
    stderr: started.stderr,
    exited,
    kill: (signal) => started.kill(signal),
    ...(started.groupAlive === undefined ? {} : { groupAlive: () => started.groupAlive?.() ?? false }),
  };
  return process;
}

/**
 * The server script: next to this module in the built package; from the sources (this package's
 * own tests), the built one in dist/.
 */
function serverScript(): string {
  const built = fileURLToPath(new URL('./server/sandbox-server.js', import.meta.url));
  if (existsSync(built)) return built;
  return fileURLToPath(new URL('../dist/server/sandbox-server.js', import.meta.url));
}

let ripgrep: Promise<string> | undefined;

/** The ripgrep of `@vscode/ripgrep` (visible read-only inside the container), else `rg` on the container's PATH. */
function bundledRipgrep(): Promise<string> {
  ripgrep ??= import('@vscode/ripgrep').then(
    (module) => module.rgPath,
    () => 'rg',
  );
  return ripgrep;
}

function findOnPath(program: string, searchPath: string): string | undefined {
  for (const directory of searchPath.split(delimiter)) {
    if (directory.length === 0) continue;
    const candidate = join(directory, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return undefined;
}

/**
 * What the server needs to start inside the container: the Node executable, the server's package
 * and the packages it imports (`@rho/core`), each as its real path.
 */
function serverRuntimePaths(server: string): string[] {
  const paths = new Set<string>();
  const add = (path: string | undefined) => {
    if (path === undefined) return;
    try {
      paths.add(realpathSync(path));
    } catch {
      // Not there: nothing to bind.
    }
  };
  add(process.execPath);
  const serverPackage = packageRoot(server);
  add(serverPackage);
  add(findPackage(serverPackage ?? dirname(server), '@rho/core'));
  return [...paths];
}

/** The nearest directory at or above `file`'s that holds a package.json. */
function packageRoot(file: string): string | undefined {
  let directory = dirname(file);
  for (;;) {
    if (existsSync(join(directory, 'package.json'))) return directory;
    const parent = dirname(directory);
    if (parent === directory) return undefined;
    directory = parent;
  }
}

/** Where Node's resolution from `from` finds package `name` (its real path), if anywhere. */
function findPackage(from: string, name: string): string | undefined {
  let directory = from;
  for (;;) {
    const candidate = join(directory, 'node_modules', name);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(directory);
    if (parent === directory) return undefined;
    directory = parent;
  }
}
