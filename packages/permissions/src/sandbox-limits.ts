import { spawnSync } from 'node:child_process';
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, relative, isAbsolute } from 'node:path';

/**
 * Resource limits of one sandboxed command line (every process of every pipeline of one `bash`
 * call), set by a profile's `limits:` key.
 */
export interface SandboxLimits {
  /** Most processes at once (YAML `limits.pids`). */
  pids: number;
  /** Most memory in bytes: the processes' memory and what they put in /tmp (YAML `limits.memory`). */
  memoryBytes: number;
  /** Most CPU time of each process, in seconds (YAML `limits.cpu_seconds`). */
  cpuSeconds: number;
  /** Largest file in the private /tmp, in bytes (YAML `limits.tmp_size`). */
  tmpBytes: number;
}

const MIB = 1024 * 1024;

/** The limits of a profile that sets none. */
export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  pids: 256,
  memoryBytes: 512 * MIB,
  cpuSeconds: 60,
  tmpBytes: 128 * MIB,
});

/** The keys of a profile's `limits:` mapping. */
export const SANDBOX_LIMIT_KEYS = ['pids', 'memory', 'cpu_seconds', 'tmp_size'] as const;

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  m: MIB,
  mb: MIB,
  mib: MIB,
  g: 1024 * MIB,
  gb: 1024 * MIB,
  gib: 1024 * MIB,
  t: 1024 * 1024 * MIB,
  tb: 1024 * 1024 * MIB,
  tib: 1024 * 1024 * MIB,
};

/**
 * A size written in a profile: a whole number of bytes, or a number with a binary unit
 * (`512M`, `512 MiB`, `1G`, `64k`; K, M, G and T are powers of 1024). Undefined when it is none.
 */
export function parseByteSize(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(value);
  if (match === null) return undefined;
  const unit = UNITS[(match[2] ?? '').toLowerCase()];
  if (unit === undefined) return undefined;
  const bytes = Math.floor(Number(match[1]) * unit);
  return Number.isSafeInteger(bytes) && bytes > 0 ? bytes : undefined;
}

/** A size for people: `512 MiB`, `1.5 GiB`, `4096 bytes`. */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['GiB', 1024 * MIB],
    ['MiB', MIB],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= size) {
      const value = bytes / size;
      return `${Number.isInteger(value) ? value : value.toFixed(1)} ${unit}`;
    }
  }
  return `${bytes} bytes`;
}

/** A cgroup made for one run, holding its process and memory limits. */
export interface LimitCgroup {
  /** The `cgroup.procs` files a process writes its pid to, to join (one per hierarchy). */
  procsFiles: string[];
  /** Whether it holds the process limit. */
  pids: boolean;
  /** Whether it holds the memory limit. */
  memory: boolean;
  /** What the kernel counted: forks refused at the process limit, processes killed at the memory limit. */
  events(): { forksRefused: number; oomKills: number };
  /** Removes the cgroup once its processes are gone (retried for ten seconds). */
  remove(): Promise<void>;
}

interface CgroupMount {
  /** Where the hierarchy is mounted. */
  mountPoint: string;
  /** The hierarchy's path shown at the mount point (`/` unless a container mounts a subtree). */
  root: string;
  /** cgroup v2 (one unified hierarchy) or v1 (a hierarchy per controller). */
  version: 1 | 2;
  /** The v1 controllers of the hierarchy. */
  controllers: string[];
}

function cgroupMounts(): CgroupMount[] {
  let text: string;
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  const mounts: CgroupMount[] = [];
  for (const line of text.split('\n')) {
    const [before, after] = line.split(' - ');
    if (before === undefined || after === undefined) continue;
    const fields = before.split(' ');
    const [fsType, , superOptions] = after.split(' ');
    const root = fields[3];
    const mountPoint = fields[4];
    if (root === undefined || mountPoint === undefined) continue;
    if (fsType === 'cgroup2') mounts.push({ mountPoint, root, version: 2, controllers: [] });
    else if (fsType === 'cgroup')
      mounts.push({ mountPoint, root, version: 1, controllers: (superOptions ?? '').split(',') });
  }
  return mounts;
}

/** The directory of this process's cgroup in `mount`, if the mount shows it. */
function ownDirectory(mount: CgroupMount, memberships: string[][]): string | undefined {
  for (const [, controllers, path] of memberships) {
    if (controllers === undefined || path === undefined) continue;
    const matches =
      mount.version === 2
        ? controllers === ''
        : controllers.split(',').some((controller) => mount.controllers.includes(controller));
    if (!matches) continue;
    const inside = relative(mount.root, path);
    if (inside.startsWith('..') || isAbsolute(inside)) return undefined;
    return join(mount.mountPoint, inside);
  }
  return undefined;
}

function readNumber(file: string, key: string): number {
  try {
    const line = readFileSync(file, 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith(`${key} `));
    return line === undefined ? 0 : Number(line.slice(key.length + 1)) || 0;
  } catch {
    return 0;
  }
}

let counter = 0;
const swept = new Set<string>();

/**
 * Removes what a rho that died (SIGKILL, a crash) left under `parent`: the entries `pattern` names
 * for a process (its first group, a pid) that no longer exists. Once per parent, pattern and process.
 */
function sweepLeftovers(parent: string, pattern: RegExp, remove: (path: string) => void): void {
  const key = `${parent}\0${pattern.source}`;
  if (swept.has(key)) return;
  swept.add(key);
  let entries: string[];
  try {
    entries = readdirSync(parent);
  } catch {
    return;
  }
  for (const entry of entries) {
    const owner = pattern.exec(entry)?.[1];
    if (owner === undefined || owner === String(process.pid) || existsSync(`/proc/${owner}`)) continue;
    try {
      remove(join(parent, entry));
    } catch {
      // Still in use, or not ours to remove.
    }
  }
}

/** The empty cgroups of dead rho processes. */
function sweep(parent: string): void {
  sweepLeftovers(parent, /^rho-limits-(\d+)-\d+$/, (path) => rmdirSync(path));
}

function makeChild(parent: string, files: Record<string, string>): string | undefined {
  sweep(parent);
  counter += 1;
  const path = join(parent, `rho-limits-${process.pid}-${counter}`);
  try {
    mkdirSync(path);
  } catch {
    return undefined;
  }
  for (const [file, value] of Object.entries(files)) {
    try {
      writeFileSync(join(path, file), value);
    } catch {
      try {
        rmdirSync(path);
      } catch {
        // left for the kernel to report; nothing runs in it
      }
      return undefined;
    }
  }
  return path;
}

/**
 * A new cgroup for one run under this process's own, holding `pids` (pids.max) and `memoryBytes`
 * (memory.max, or memory.limit_in_bytes on cgroup v1), where this process may make one (root, or
 * a delegated cgroup v2 subtree); undefined where it cannot hold either limit. Unlike
 * RLIMIT_NPROC, a pids cgroup binds root and counts only the run's own processes.
 */
export function createLimitCgroup(limits: { pids?: number; memoryBytes?: number }): LimitCgroup | undefined {
  if (process.platform !== 'linux') return undefined;
  let memberships: string[][];
  try {
    memberships = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => {
        const first = line.indexOf(':');
        const second = line.indexOf(':', first + 1);
        return [line.slice(0, first), line.slice(first + 1, second), line.slice(second + 1)];
      });
  } catch {
    return undefined;
  }
  const mounts = cgroupMounts();
  const directories: string[] = [];
  let pidsDirectory: string | undefined;
  let memoryDirectory: string | undefined;
  let version: 1 | 2 = 1;
  // cgroup v2 first: one directory holds both limits.
  for (const mount of mounts.filter((candidate) => candidate.version === 2)) {
    const own = ownDirectory(mount, memberships);
    if (own === undefined) continue;
    let available: string[];
    try {
      available = readFileSync(join(own, 'cgroup.controllers'), 'utf8').trim().split(/\s+/);
    } catch {
      continue;
    }
    const wanted = [
      ...(limits.pids !== undefined && available.includes('pids') ? ['pids'] : []),
      ...(limits.memoryBytes !== undefined && available.includes('memory') ? ['memory'] : []),
    ];
    if (wanted.length === 0) continue;
    try {
      writeFileSync(join(own, 'cgroup.subtree_control'), wanted.map((name) => `+${name}`).join(' '));
    } catch {
      // Already enabled, or not allowed here (processes in a non-root cgroup): the child tells.
    }
    const files: Record<string, string> = {};
    if (wanted.includes('pids')) files['pids.max'] = String(limits.pids);
    if (wanted.includes('memory')) files['memory.max'] = String(limits.memoryBytes);
    const path = makeChild(own, files);
    if (path === undefined) continue;
    if (wanted.includes('memory')) {
      try {
        writeFileSync(join(path, 'memory.swap.max'), '0');
      } catch {
        // No swap accounting: nothing to bound.
      }
    }
    directories.push(path);
    if (wanted.includes('pids')) pidsDirectory = path;
    if (wanted.includes('memory')) memoryDirectory = path;
    version = 2;
    break;
  }
  if (directories.length === 0) {
    // cgroup v1: a hierarchy per controller.
    for (const [controller, file, value] of [
      ['pids', 'pids.max', limits.pids],
      ['memory', 'memory.limit_in_bytes', limits.memoryBytes],
    ] as const) {
      if (value === undefined) continue;
      for (const mount of mounts.filter(
        (candidate) => candidate.version === 1 && candidate.controllers.includes(controller),
      )) {
        const own = ownDirectory(mount, memberships);
        if (own === undefined) continue;
        const path = makeChild(own, { [file]: String(value) });
        if (path === undefined) continue;
        if (controller === 'memory') {
          try {
            writeFileSync(join(path, 'memory.memsw.limit_in_bytes'), String(value));
          } catch {
            // No swap accounting: nothing to bound.
          }
        }
        directories.push(path);
        if (controller === 'pids') pidsDirectory = path;
        else memoryDirectory = path;
        break;
      }
    }
  }
  if (directories.length === 0) return undefined;
  return {
    procsFiles: directories.map((directory) => join(directory, 'cgroup.procs')),
    pids: pidsDirectory !== undefined,
    memory: memoryDirectory !== undefined,
    events() {
      return {
        forksRefused: pidsDirectory === undefined ? 0 : readNumber(join(pidsDirectory, 'pids.events'), 'max'),
        oomKills:
          memoryDirectory === undefined
            ? 0
            : readNumber(join(memoryDirectory, version === 2 ? 'memory.events' : 'memory.oom_control'), 'oom_kill'),
      };
    },
    async remove() {
      for (const directory of directories) {
        // Processes still leaving (EBUSY) after a kill, on a loaded machine, can take seconds:
        // retried with growing pauses for ten seconds (a cgroup left behind, by a rho killed
        // meanwhile, is removed by the next one's sweep).
        let pause = 5;
        for (let waited = 0; waited < 10_000 && existsSync(directory); waited += pause) {
          try {
            rmdirSync(directory);
            break;
          } catch {
            await new Promise((resolve) => setTimeout(resolve, pause));
            pause = Math.min(pause * 2, 500);
          }
        }
      }
    },
  };
}

/** What holds each limit of a run on this machine. */
export interface LimitEnforcement {
  /** A pids cgroup; RLIMIT_NPROC inside the sandbox's user namespace (not binding for root); or nothing. */
  pids: 'cgroup' | 'rlimit' | 'none';
  /** A memory cgroup (which also counts /tmp); RLIMIT_AS per process; or nothing. */
  memory: 'cgroup' | 'rlimit' | 'none';
  /** RLIMIT_CPU per process, or nothing (no `prlimit`). */
  cpu: 'rlimit' | 'none';
  /** A directory on disk made for the run, each file bounded by RLIMIT_FSIZE; or bubblewrap's own tmpfs. */
  tmp: 'disk' | 'none';
}

/** The arguments a run's limits add to the sandbox's argv (see `SandboxRunOptions.limits`). */
export interface SandboxLimitArguments {
  /** Before bubblewrap: joins the run's cgroup, then execs the rest. */
  outer: readonly string[];
  /** What bubblewrap mounts at /tmp (`--bind DIR /tmp`, `--size N --tmpfs /tmp`); empty: its own tmpfs. */
  tmp: readonly string[];
  /** Inside the sandbox, before the program: `prlimit` with the per-process limits, then the program. */
  inner: readonly string[];
}

/** A limit a run reached, named for the model and the user. */
export interface LimitHit {
  /** The profile key that sets it. */
  limit: 'pids' | 'memory' | 'cpu_seconds' | 'tmp_size';
  /** One sentence: `process limit reached (pids 256): ...`. */
  message: string;
}

/** What a run did, for {@link SandboxLimitRun.hits}. */
export interface LimitOutcome {
  /** The exit statuses of the run's processes, as bash reports them (128 + signal when killed). */
  statuses: readonly number[];
  /** What the processes wrote on standard error (and standard output when merged). */
  stderr: string;
}

/** Where to find `prlimit`; for tests and unusual hosts. */
export interface SandboxLimitOptions {
  /** `PATH`-style directories to search for `prlimit`; defaults to `process.env.PATH`. */
  searchPath?: string;
  /** The bubblewrap executable. */
  bwrap?: string;
  /** Where the run's /tmp is made on disk; default /var/tmp where writable, else the system's temporary directory. */
  tmpParent?: string;
  /** Make no cgroup (as on a host where none can be made); the rlimits then hold what they can. */
  noCgroup?: boolean;
}

const SIGXCPU_STATUS = 128 + 24;
const SIGXFSZ_STATUS = 128 + 25;

/** The runs' /tmp directories of dead rho processes. */
function sweepTmp(parent: string): void {
  sweepLeftovers(parent, /^rho-sandbox-tmp-(\d+)-/, (path) => rmSync(path, { recursive: true, force: true }));
}

/** A disk-backed parent for the runs' /tmp: /var/tmp (disk on the usual systems, where /tmp may be RAM), else tmpdir(). */
function defaultTmpParent(): string {
  try {
    accessSync('/var/tmp', constants.W_OK | constants.X_OK);
    return '/var/tmp';
  } catch {
    return tmpdir();
  }
}

/** The `sh` script that joins the cgroups named before `--`, then runs the rest. */
const JOIN_SCRIPT = 'while [ "$1" != -- ]; do echo $$ > "$1" || exit 125; shift; done; shift; exec "$@"';

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

const tmpfsSizeSupport = new Map<string, boolean>();

/** Whether this bubblewrap takes `--size` for a tmpfs (0.8 and later). */
export function bubblewrapBoundsTmpfs(bwrap: string): boolean {
  let known = tmpfsSizeSupport.get(bwrap);
  if (known === undefined) {
    const help = spawnSync(bwrap, ['--help'], { encoding: 'utf8', timeout: 5000 });
    known = `${help.stdout ?? ''}${help.stderr ?? ''}`.includes('--size');
    tmpfsSizeSupport.set(bwrap, known);
  }
  return known;
}

/**
 * The limits of one sandboxed run (one `bash` call): a cgroup made for it where one can be
 * (processes and memory), `prlimit` inside the sandbox for what the cgroup does not hold (CPU
 * time; RLIMIT_NPROC and RLIMIT_AS when there is no cgroup), a /tmp on disk made for it whose
 * files RLIMIT_FSIZE bounds. Pass {@link SandboxLimitRun.arguments} as `limits` of every `wrap`
 * of the run, then ask {@link SandboxLimitRun.hits} what was reached, and
 * {@link SandboxLimitRun.release} the cgroup and the /tmp directory.
 */
export class SandboxLimitRun {
  /** The limits of the run. */
  readonly limits: Readonly<SandboxLimits>;
  /** What holds each limit here. */
  readonly enforcement: LimitEnforcement;
  /** What to add to each sandbox of the run. */
  readonly arguments: SandboxLimitArguments;
  private readonly cgroup: LimitCgroup | undefined;
  private readonly tmpDirectory: string | undefined;

  constructor(limits: Readonly<SandboxLimits>, options: SandboxLimitOptions = {}) {
    this.limits = limits;
    const cgroup =
      options.noCgroup === true ? undefined : createLimitCgroup({ pids: limits.pids, memoryBytes: limits.memoryBytes });
    this.cgroup = cgroup;
    const prlimit = findOnPath('prlimit', options.searchPath ?? process.env['PATH'] ?? '');
    const root = process.getuid?.() === 0;
    // RLIMIT_NPROC set inside the sandbox's own user namespace counts only the sandbox's
    // processes (set outside, it counts every process of the user on the host); root is exempt.
    const pids = cgroup?.pids === true ? 'cgroup' : prlimit !== undefined && !root ? 'rlimit' : 'none';
    const memory = cgroup?.memory === true ? 'cgroup' : prlimit !== undefined ? 'rlimit' : 'none';
    // /tmp on disk, not in RAM: a directory made for the run, bound at /tmp in each of its
    // sandboxes (shared by the line's processes), each file bounded by RLIMIT_FSIZE, removed after.
    let tmpDirectory: string | undefined;
    if (prlimit !== undefined) {
      try {
        const parent = options.tmpParent ?? defaultTmpParent();
        sweepTmp(parent);
        tmpDirectory = mkdtempSync(join(parent, `rho-sandbox-tmp-${process.pid}-`));
      } catch {
        tmpDirectory = undefined;
      }
    }
    this.tmpDirectory = tmpDirectory;
    const tmp = tmpDirectory === undefined ? 'none' : 'disk';
    this.enforcement = { pids, memory, cpu: prlimit === undefined ? 'none' : 'rlimit', tmp };
    const rlimits =
      prlimit === undefined
        ? []
        : [
            prlimit,
            `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
            '--core=0',
            ...(tmp === 'disk' ? [`--fsize=${limits.tmpBytes}`] : []),
            // The kernel ignores RLIMIT_RSS; GNU sort reads it to size its buffer (else it sizes
            // it from the host's memory, grows past the memory limit and is killed) and spills the
            // rest to /tmp.
            `--rss=${Math.floor(limits.memoryBytes / 4)}`,
            ...(pids === 'rlimit' ? [`--nproc=${limits.pids}`] : []),
            ...(memory === 'rlimit' ? [`--as=${limits.memoryBytes}`] : []),
            '--',
          ];
    this.arguments = {
      outer: cgroup === undefined ? [] : ['/bin/sh', '-c', JOIN_SCRIPT, 'rho-limits', ...cgroup.procsFiles, '--'],
      tmp: tmpDirectory === undefined ? [] : ['--bind', tmpDirectory, '/tmp'],
      inner: rlimits,
    };
  }

  /** The limits the run reached, each named with its value (empty when none was). */
  hits(outcome: LimitOutcome): LimitHit[] {
    const hits: LimitHit[] = [];
    const events = this.cgroup?.events() ?? { forksRefused: 0, oomKills: 0 };
    const { pids, memoryBytes, cpuSeconds, tmpBytes } = this.limits;
    const forkFailed = /fork: retry|cannot fork|fork failed|Resource temporarily unavailable/i.test(outcome.stderr);
    if (events.forksRefused > 0 || (this.enforcement.pids === 'rlimit' && forkFailed)) {
      hits.push({
        limit: 'pids',
        message: `process limit reached (pids ${pids}): the command could not start more processes`,
      });
    }
    const allocationFailed = /cannot allocate memory|out of memory|bad_alloc|memory exhausted/i.test(outcome.stderr);
    if (events.oomKills > 0) {
      hits.push({
        limit: 'memory',
        message: `memory limit reached (${formatBytes(memoryBytes)}): a process of the command was killed`,
      });
    } else if (this.enforcement.memory === 'rlimit' && allocationFailed) {
      hits.push({
        limit: 'memory',
        message: `memory limit reached (${formatBytes(memoryBytes)}): a process of the command could not allocate more`,
      });
    }
    if (outcome.statuses.includes(SIGXCPU_STATUS)) {
      hits.push({
        limit: 'cpu_seconds',
        message: `CPU time limit (${cpuSeconds} s): a process was stopped after ${cpuSeconds} s of CPU time`,
      });
    }
    if (
      this.enforcement.tmp === 'disk' &&
      (outcome.statuses.includes(SIGXFSZ_STATUS) || /File too large|File size limit exceeded/i.test(outcome.stderr))
    ) {
      hits.push({
        limit: 'tmp_size',
        message: `file size limit (tmp_size ${formatBytes(tmpBytes)}): a process wrote a file as large as a file may be`,
      });
    }
    return hits;
  }

  /** Removes the run's /tmp and its cgroup (after its processes are gone). */
  release(): Promise<void> {
    if (this.tmpDirectory !== undefined) {
      try {
        rmSync(this.tmpDirectory, { recursive: true, force: true });
      } catch {
        // A file still open by a process that is leaving: the directory is gone with the next sweep of the system's temporary files.
      }
    }
    return this.cgroup?.remove() ?? Promise.resolve();
  }
}

/** A profile's limits with the defaults for what it does not set. */
export function resolveSandboxLimits(partial: Partial<SandboxLimits> | undefined): SandboxLimits {
  return { ...DEFAULT_SANDBOX_LIMITS, ...partial };
}
