import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { basename, delimiter, join } from 'node:path';
import type { ShellCommand } from './check-shell-command.js';
import type { SandboxLimitArguments } from './sandbox-limits.js';
import type { PermissionProfile, ProfileSandboxMode } from './permission-profile.js';
import { readView, type ReadView } from './read-view.js';
import { viewMounts } from './sandbox-mounts.js';

/**
 * Whether restricted commands must run in the operating-system sandbox (`required`, the default)
 * or may run without one (`off`, set explicitly in a profile: every run then warns).
 */
export type SandboxMode = ProfileSandboxMode;

/** Options of a sandboxed run. */
export interface SandboxRunOptions {
  /** Directory the command runs in (bound read-only unless `writableCwd`). */
  cwd: string;
  /**
   * What the process sees (`readView` of `@rho/permissions`): the working directory, the system
   * directories and the profile's read paths, with rho's home hidden and secrets masked. Absent:
   * the view of `cwd` with the defaults and `hide`.
   */
  view?: ReadView;
  /** Directories bound read-write besides the working directory (the profile's write roots, for the developer shell). */
  writable?: readonly string[];
  /**
   * Keep the host's network (this one process: curl, wget); otherwise the process has a network
   * namespace of its own with nothing but its own loopback.
   */
  allowNetwork: boolean;
  /** Bind `cwd` read-write instead of read-only (a sandbox for tools that may change the working directory). */
  writableCwd?: boolean;
  /**
   * Start the process with exactly this environment instead of inheriting rho's (bubblewrap's
   * `--clearenv` then `--setenv` for each entry).
   */
  env?: Readonly<Record<string, string>>;
  /** Directories hidden behind an empty read-only tmpfs (rho's home, with its database passwords), added to the view's. */
  hide?: readonly string[];
  /** Directories created (empty) inside the private /tmp before the command starts. */
  tmpDirs?: readonly string[];
  /**
   * Files or directories bound read-only again after the private /tmp, the hidden directories and
   * the working directory: what the command itself needs to start (the Node executable and the
   * packages of a server run in the container) when it lives under /tmp or another hidden place.
   */
  readOnlyBinds?: readonly string[];
  /**
   * The resource limits of the run (`SandboxLimitRun.arguments` of sandbox-limits.ts): the cgroup
   * joined before bubblewrap starts, what is mounted at /tmp, `prlimit` before the program.
   */
  limits?: SandboxLimitArguments;
}

/** An operating-system sandbox for restricted commands. */
export interface SandboxWrapper {
  /** Whether the sandbox can run on this machine. */
  available: boolean;
  /** What sandboxes commands (`bubblewrap (/usr/bin/bwrap)`), or `none`. */
  description: string;
  /** When not available: why, and how to get one (a sentence for people and for the model). */
  unavailableReason?: string;
  /** When not available: the same reason in parts (what failed, what to do), for `rho doctor`. */
  unavailableCause?: SandboxUnavailableCause;
  /** The argv that runs `argv` inside the sandbox (the argv itself when the sandbox is unavailable). */
  wrap(argv: string[], options: SandboxRunOptions): string[];
  /** The `bwrap` executable, when available. */
  program?: string;
}

/** Why the sandbox cannot run here, in parts (see {@link SandboxWrapper.unavailableReason} for the sentence). */
export interface SandboxUnavailableCause {
  /** Not Linux; no `bwrap` on the search path; or `bwrap` found but unable to make a sandbox. */
  kind: 'platform' | 'not_found' | 'probe_failed';
  /** What failed, in a few words (`bwrap was not found on PATH`). */
  problem: string;
  /** What to do about it (install bubblewrap; allow user namespaces; ...). */
  fix: string;
  /** The `bwrap` that was found and failed (`probe_failed`). */
  program?: string;
}

/** Where to look for the sandbox program; for tests and for hosts with an unusual layout. */
export interface SandboxLookupOptions {
  /** Directories to search for `bwrap`, `PATH`-style; defaults to `process.env.PATH`. */
  searchPath?: string;
  /** The platform to decide for; defaults to `process.platform`. */
  platform?: NodeJS.Platform;
}

/**
 * Programs that need the network: in a pipeline, only the process that runs one of these shares
 * the host's network; every other process of the line has none.
 */
export const NETWORK_PROGRAMS: ReadonlySet<string> = new Set(['curl', 'wget', 'ping', 'dig', 'nslookup', 'host']);

/** Whether `command` gets the network inside the sandbox: its working program (past wrappers) is a network program. */
export function commandNeedsNetwork(command: Pick<ShellCommand, 'argv' | 'programIndex'>): boolean {
  return NETWORK_PROGRAMS.has(basename(command.argv[command.programIndex ?? 0] ?? ''));
}

/** How to install bubblewrap, by distribution. */
export const BUBBLEWRAP_INSTALL =
  'install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora/RHEL: sudo dnf install bubblewrap; ' +
  'Arch: sudo pacman -S bubblewrap; Alpine: sudo apk add bubblewrap; openSUSE: sudo zypper install bubblewrap)';

const OFF_HINT =
  'or, knowing that the validators are then the only protection, set `sandbox: off` in a profile of your own';

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

function bubblewrapArguments(bwrap: string, argv: string[], options: SandboxRunOptions): string[] {
  // What the process sees is the read view, built from the working directory and the hidden
  // directories when the caller did not give one: the host's root is never bound.
  const view = options.view ?? readView({ workingDir: options.cwd, hide: options.hide ?? [] });
  const mounts = viewMounts(view, {
    allowNetwork: options.allowNetwork,
    ...(options.writableCwd === undefined ? {} : { writableCwd: options.writableCwd }),
    ...(options.writable === undefined ? {} : { writable: options.writable }),
  });
  return [
    ...(options.limits?.outer ?? []),
    bwrap,
    ...mounts.system,
    '--dev',
    '/dev',
    // A procfs of the new PID namespace: `ps` and /proc show the sandbox's processes only.
    '--proc',
    '/proc',
    // A private, empty /tmp: programs that need scratch space (sort) still work, nothing persists.
    ...(options.limits?.tmp ?? ['--tmpfs', '/tmp']),
    // Without the network, nothing under /run is needed; its Unix sockets (docker, dbus, database
    // servers) are hidden. A network program keeps it: resolv.conf often points into /run.
    ...(!options.allowNetwork && existsSync('/run') ? ['--tmpfs', '/run'] : []),
    ...(options.tmpDirs ?? []).flatMap((directory) => ['--dir', directory]),
    // Bound after the private /tmp, so a working directory under /tmp stays visible.
    ...mounts.view,
    ...(options.readOnlyBinds ?? []).filter(existsSync).flatMap((path) => ['--ro-bind', path, path]),
    ...mounts.remount,
    // The empty root itself: nothing written outside the writable binds and /tmp.
    '--remount-ro',
    '/',
    // New user, IPC, PID, network, UTS and cgroup namespaces.
    '--unshare-all',
    ...(options.allowNetwork ? ['--share-net'] : []),
    '--hostname',
    'rho-sandbox',
    // When rho runs as root, bubblewrap would keep root's capabilities inside.
    '--cap-drop',
    'ALL',
    '--die-with-parent',
    '--new-session',
    ...(options.env === undefined
      ? []
      : ['--clearenv', ...Object.entries(options.env).flatMap(([name, value]) => ['--setenv', name, value])]),
    '--chdir',
    options.cwd,
    '--',
    ...(options.limits?.inner ?? []),
    ...argv,
  ];
}

function probe(bwrap: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    let stderr = '';
    const child = spawn(
      bwrap,
      bubblewrapArguments(bwrap, ['true'], {
        cwd: '/usr',
        allowNetwork: false,
        view: readView({ workingDir: '/usr', scan: false }),
      }).slice(1),
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', (error) => resolve(error.message));
    child.on('close', (code, signal) =>
      resolve(code === 0 ? undefined : stderr.trim().split('\n')[0] || `exit ${code ?? signal}`),
    );
  });
}

function unavailable(reason: string, cause: SandboxUnavailableCause): SandboxWrapper {
  return {
    available: false,
    description: 'none',
    unavailableReason: reason,
    unavailableCause: cause,
    wrap: (argv) => argv,
  };
}

const NAMESPACES_FIX =
  'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 and later an ' +
  'AppArmor profile that allows bwrap to use them), or run rho as root';

async function detect(options: Required<SandboxLookupOptions>): Promise<SandboxWrapper> {
  if (options.platform !== 'linux') {
    const system = options.platform === 'darwin' ? 'macOS' : options.platform;
    return unavailable(
      `rho's sandbox for restricted commands is bubblewrap, which needs Linux; on ${system} rho supports no sandbox ` +
        `(macOS's sandbox-exec is deprecated and not used), so restricted commands are refused. Run rho in a Linux ` +
        `container or VM with bubblewrap installed, ${OFF_HINT}.`,
      {
        kind: 'platform',
        problem: `bubblewrap needs Linux, and this is ${system}`,
        fix: 'run rho in a Linux container or VM with bubblewrap installed',
      },
    );
  }
  const bwrap = findOnPath('bwrap', options.searchPath);
  if (bwrap === undefined) {
    return unavailable(
      `restricted commands run inside the bubblewrap sandbox, and bwrap was not found on PATH: ${BUBBLEWRAP_INSTALL}, ${OFF_HINT}.`,
      { kind: 'not_found', problem: 'bwrap was not found on PATH', fix: BUBBLEWRAP_INSTALL },
    );
  }
  const failure = await probe(bwrap);
  if (failure !== undefined) {
    return unavailable(
      `bubblewrap (${bwrap}) cannot create a sandbox here (${failure}); it needs root or unprivileged user ` +
        `namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 and later an AppArmor profile ` +
        `that allows bwrap to use them), ${OFF_HINT}.`,
      {
        kind: 'probe_failed',
        problem: `bubblewrap (${bwrap}) cannot create a sandbox here (${failure})`,
        fix: NAMESPACES_FIX,
        program: bwrap,
      },
    );
  }
  return {
    available: true,
    description: `bubblewrap (${bwrap})`,
    program: bwrap,
    wrap: (argv: string[], runOptions: SandboxRunOptions): string[] => bubblewrapArguments(bwrap, argv, runOptions),
  };
}

const cache = new Map<string, Promise<SandboxWrapper>>();

/**
 * The bubblewrap sandbox, when `bwrap` is installed and works here (it needs user namespaces or
 * root): the read view only (the working directory, the system directories, the profile's read
 * paths; rho's home hidden, secrets masked), a private /tmp and /run, new user, IPC, PID, UTS,
 * cgroup and network namespaces (the network only for the one process that asks for it), no
 * capabilities, a new session (no terminal), killed with its parent. Probed once per lookup (by
 * running `true` inside it). On other systems than Linux, or without a working `bwrap`,
 * `available` is false and `unavailableReason` says why and what to install.
 */
export function sandboxWrapper(options: SandboxLookupOptions = {}): Promise<SandboxWrapper> {
  const resolved = {
    searchPath: options.searchPath ?? process.env['PATH'] ?? '',
    platform: options.platform ?? process.platform,
  };
  const key = `${resolved.platform}\0${resolved.searchPath}`;
  let found = cache.get(key);
  if (found === undefined) {
    found = detect(resolved);
    cache.set(key, found);
  }
  return found;
}

/** The sandbox mode of a profile (`required` unless the profile sets `sandbox: off`). */
export function sandboxModeOf(profile: Pick<PermissionProfile, 'sandbox'>): SandboxMode {
  return profile.sandbox ?? 'required';
}

/** The warning of a profile that sets `sandbox: off`, shown on every run. */
export function sandboxOffWarning(profileName: string): string {
  return (
    `profile ${profileName} sets \`sandbox: off\`: restricted shell commands run without the operating-system sandbox ` +
    "(they can see rho's processes and reach the network, and the shell validators are the only barrier against writes)"
  );
}

/** What the sandbox does for a profile's restricted commands on this machine. */
export interface SandboxStatus {
  /** The profile's mode. */
  mode: SandboxMode;
  /** Whether restricted commands run inside the sandbox. */
  active: boolean;
  /** What sandboxes them (`bubblewrap (/usr/bin/bwrap)`), or `none`. */
  description: string;
  /** Set when restricted commands are refused: the sandbox is required and missing (why, how to install one). */
  refusal?: string;
  /** Set when commands run without the sandbox because the profile says so: to be shown on every run. */
  warning?: string;
}

/**
 * The one decision about the sandbox, used by the restricted shell and by `rho policy check`:
 * required and available, it is active; required and missing, every restricted command is
 * refused (with how to install one); `off`, commands run without it and a warning says so.
 */
export function sandboxStatus(
  profile: Pick<PermissionProfile, 'sandbox' | 'name'>,
  wrapper: SandboxWrapper,
): SandboxStatus {
  const mode = sandboxModeOf(profile);
  if (mode === 'off') {
    return {
      mode,
      active: false,
      description: 'none',
      warning: sandboxOffWarning(profile.name),
    };
  }
  if (!wrapper.available) {
    return {
      mode,
      active: false,
      description: wrapper.description,
      refusal: wrapper.unavailableReason ?? 'no sandbox is available',
    };
  }
  return { mode, active: true, description: wrapper.description };
}
