import { execFile, type ExecFileException } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { access, open, stat, statfs, unlink } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { MIN_NODE, unsupportedNodeMessage } from '../../node-version.js';
import { result, seconds, type CheckResult } from './report.js';

/** Below this much free space under `$RHO_HOME`, a warning. */
export const DISK_WARN_BYTES = 1024 ** 3;
/** Below this much, a failure: a session's trace may not fit. */
export const DISK_FAIL_BYTES = 100 * 1024 ** 2;

/** The Node running rho against the floor bin.ts enforces (so, started at all, it passes; the message is the same). */
export function nodeCheck(version: string = process.versions.node, execPath: string = process.execPath): CheckResult {
  const unsupported = unsupportedNodeMessage(version, execPath);
  if (unsupported !== undefined)
    return result(
      'node',
      'fail',
      `Node.js ${version} (${execPath}) is older than the ${MIN_NODE.major}.${MIN_NODE.minor} rho needs`,
      'install Node.js 22 or 24 (nodejs.org, or your package manager) and run rho with it',
    );
  return result(
    'node',
    'ok',
    `Node.js ${version} (${execPath}), rho needs ${MIN_NODE.major}.${MIN_NODE.minor} or newer`,
  );
}

/** The nearest directory at or above `path` that exists, and the file in the way when one is. */
async function nearestExisting(path: string): Promise<{ existing: string; blocked?: string }> {
  let current = path;
  for (;;) {
    try {
      const stats = await stat(current);
      if (stats.isDirectory()) return { existing: current };
      return { existing: dirname(current), blocked: current };
    } catch (error) {
      const parent = dirname(current);
      const code = (error as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || parent === current) return { existing: current };
      current = parent;
    }
  }
}

const errnoText = (error: unknown): string => {
  const code = (error as NodeJS.ErrnoException).code;
  const words: Record<string, string> = {
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'a read-only file system',
    ENOSPC: 'no space left',
    ENOTDIR: 'a file is in the way',
    EDQUOT: 'over the disk quota',
  };
  return code === undefined ? String((error as Error).message) : `${words[code] ?? (error as Error).message} (${code})`;
};

/**
 * `$RHO_HOME`: it exists (or its nearest existing parent lets rho create it), a file can be
 * created in it (tried, then removed), and it is private: sessions and their saved settings may
 * hold secrets, so a directory others may write is a failure and one others may read a warning.
 */
export async function rhoHomeCheck(home: string): Promise<CheckResult> {
  const chmod = `chmod 700 ${shellQuote(home)}`;
  let stats;
  try {
    stats = await stat(home);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR')
      return result(
        'rho_home',
        'fail',
        `${home} cannot be read: ${errnoText(error)}`,
        'set RHO_HOME to a directory of yours',
      );
    const { existing, blocked } = await nearestExisting(home);
    if (blocked !== undefined)
      return result(
        'rho_home',
        'fail',
        `${home} cannot be created: ${blocked} is a file`,
        `remove ${blocked}, or set RHO_HOME to a directory of yours`,
      );
    try {
      await access(existing, constants.W_OK | constants.X_OK);
    } catch (error) {
      return result(
        'rho_home',
        'fail',
        `${home} does not exist and cannot be created: ${existing} is not writable (${errnoText(error)})`,
        `mkdir -m 700 ${shellQuote(home)} as a user who may, or set RHO_HOME to a directory of yours`,
      );
    }
    return result('rho_home', 'ok', `${home} does not exist yet; rho creates it (private) on the first run`);
  }
  if (!stats.isDirectory())
    return result('rho_home', 'fail', `${home} is not a directory`, `remove it, or set RHO_HOME to a directory`);
  const probe = join(home, `.rho-doctor-${randomBytes(4).toString('hex')}`);
  try {
    const handle = await open(probe, 'wx', 0o600);
    await handle.close();
    await unlink(probe);
  } catch (error) {
    const mine = process.getuid === undefined || stats.uid === process.getuid();
    return result(
      'rho_home',
      'fail',
      `${home} is not writable: ${errnoText(error)}`,
      mine
        ? `chmod u+rwx ${shellQuote(home)}`
        : `set RHO_HOME to a directory of yours (this one belongs to uid ${stats.uid})`,
    );
  }
  const mode = stats.mode & 0o777;
  const octal = `0${mode.toString(8).padStart(3, '0')}`;
  if ((mode & 0o022) !== 0)
    return result(
      'rho_home',
      'fail',
      `${home} is writable by ${(mode & 0o002) !== 0 ? 'everyone' : 'its group'} (mode ${octal}): others could change its sessions, profiles and settings`,
      chmod,
    );
  if ((mode & 0o077) !== 0)
    return result(
      'rho_home',
      'warn',
      `${home} is readable by ${(mode & 0o004) !== 0 ? 'everyone' : 'its group'} (mode ${octal}), and its sessions may hold secrets`,
      chmod,
    );
  return result('rho_home', 'ok', `${home} is writable and private (mode ${octal})`);
}

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;
const size = (bytes: number): string =>
  bytes >= GIB ? `${(bytes / GIB).toFixed(1)} GiB` : `${Math.floor(bytes / MIB)} MiB`;

/** The space free (for this user) on the file system of `$RHO_HOME` (or of the parent it will be made in). */
export async function diskCheck(home: string): Promise<CheckResult> {
  const { existing } = await nearestExisting(home);
  const where = existing === home ? home : `${existing} (where ${home} will be)`;
  const stats = await statfs(existing);
  const free = Number(stats.bavail) * Number(stats.bsize);
  const fix = `free space on that file system, or set RHO_HOME to one with more`;
  if (free < DISK_FAIL_BYTES)
    return result(
      'disk',
      'fail',
      `${size(free)} free under ${where}: below ${size(DISK_FAIL_BYTES)}, sessions' traces may not fit`,
      fix,
    );
  if (free < DISK_WARN_BYTES)
    return result('disk', 'warn', `${size(free)} free under ${where}: below ${size(DISK_WARN_BYTES)}`, fix);
  return result('disk', 'ok', `${size(free)} free under ${where}`);
}

/**
 * The ripgrep the grep and glob tools run on this machine (@vscode/ripgrep's, else
 * $RHO_RIPGREP_PATH, else rg on PATH; the sandbox backend's container sees the same), found as
 * they find it and started with `--version`. A remote backend (daytona) brings its own: skipped.
 */
export async function ripgrepCheck(
  backend: { name: string; origin: string },
  timeoutMs: number,
  signal: AbortSignal,
): Promise<CheckResult> {
  if (backend.name !== 'local' && backend.name !== 'sandbox')
    return result(
      'ripgrep',
      'skip',
      `not needed here: the ${backend.name} backend (${backend.origin}) runs rg where the tools run`,
    );
  const [{ createLocalBackend }, { resolveRipgrep }] = await Promise.all([
    import('@rho/core'),
    import('@rho/tools-fs'),
  ]);
  const program = await resolveRipgrep(createLocalBackend());
  const fix =
    'install ripgrep (Debian/Ubuntu: sudo apt-get install ripgrep; Fedora: sudo dnf install ripgrep; macOS: brew install ripgrep), or set RHO_RIPGREP_PATH to an rg';
  const version = await new Promise<{ out: string } | { error: ExecFileException }>((resolve) => {
    execFile(program, ['--version'], { timeout: timeoutMs, signal, encoding: 'utf8' }, (error, stdout) =>
      resolve(error === null ? { out: stdout } : { error }),
    );
  });
  const shown = isAbsolute(program) ? program : `${program} on PATH`;
  if ('error' in version) {
    const { error } = version;
    if ((error.code as unknown) === 'ENOENT')
      return result('ripgrep', 'fail', `ripgrep (${shown}) was not found: the grep and glob tools need it`, fix);
    if (error.killed === true)
      return result('ripgrep', 'fail', `${shown} --version did not answer within ${seconds(timeoutMs)}`, fix);
    return result('ripgrep', 'fail', `${shown} --version failed: ${error.message.split('\n')[0]}`, fix);
  }
  const first = version.out.split('\n')[0]?.trim() ?? '';
  return result('ripgrep', 'ok', `${first === '' ? 'ripgrep' : first} (${shown})`);
}

/** `path` quoted for a POSIX shell when it needs it. */
export function shellQuote(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}
