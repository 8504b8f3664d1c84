import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { SessionLockedError, SessionWriteError } from './errors.js';

/** Name of the lock file in a session directory. */
export const LOCK_FILE = 'lock';

/** What a lock file records about its owner. */
export interface LockOwner {
  pid: number;
  hostname: string;
  /** When the owner took the lock (UTC ISO-8601). */
  since: string;
  /**
   * The owner's start time in clock ticks since boot (field 22 of `/proc/<pid>/stat`), where
   * the system has it: a pid reused by another process after the owner died has another start
   * time, so the lock is still known to be stale.
   */
  start_time?: string;
}

/**
 * The lock that makes one process the only writer of a session: a `lock` file in the session
 * directory, created with O_EXCL, holding the owner's pid, host and start time. A second process
 * is refused with a {@link SessionLockedError} naming the owner. A lock left by a process that
 * died (SIGKILL, power loss) is taken over only when that is provable: the same host, and no
 * process with that pid (or one with another start time, i.e. the pid was reused).
 */
export class SessionLock {
  private released = false;

  private constructor(
    /** The lock file. */
    readonly path: string,
    /** What the lock file holds. */
    readonly owner: LockOwner,
  ) {
    // Released on every way out of the process that runs JavaScript (not SIGKILL: that is what
    // the stale-lock check is for). One listener for all locks, however many a process holds.
    held.add(this);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      process.once('exit', () => {
        for (const lock of [...held]) lock.release();
      });
    }
  }

  /** Takes the lock of a session directory, or throws {@link SessionLockedError}. */
  static acquire(directory: string): SessionLock {
    const path = join(directory, LOCK_FILE);
    // A session's directory is made on its first run (private: a trace may hold secrets).
    try {
      mkdirSync(directory, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw SessionWriteError.from(directory, error, 'The session directory cannot be created.');
    }
    const owner: LockOwner = {
      pid: process.pid,
      hostname: hostname(),
      since: new Date().toISOString(),
      ...startTimeField(process.pid),
    };
    // Two rounds at most: the first may find a stale lock and remove it.
    for (let attempt = 0; ; attempt += 1) {
      if (tryCreate(path, owner)) return new SessionLock(path, owner);
      const current = readOwner(path);
      if (current === 'missing') continue; // released meanwhile
      // An unreadable lock may be one being written this instant; one that stays unreadable for
      // ten seconds was cut short by a crash between its creation and its write.
      if (current === 'unreadable' ? ageMs(path) < 10_000 : !isStale(current))
        throw lockedError(directory, current === 'unreadable' ? undefined : current);
      if (attempt >= 2) throw lockedError(directory, current === 'unreadable' ? undefined : current);
      takeOverStale(directory, path, current);
    }
  }

  /** Releases the lock (idempotent). Only removes the file while it still names this process. */
  release(): void {
    if (this.released) return;
    this.released = true;
    held.delete(this);
    const current = readOwner(this.path);
    if (
      typeof current === 'object' &&
      current.pid === this.owner.pid &&
      current.since === this.owner.since &&
      current.hostname === this.owner.hostname
    ) {
      rmSync(this.path, { force: true });
    }
  }
}

/** Locks this process holds, released at exit. */
const held = new Set<SessionLock>();
let exitHookInstalled = false;

/** Who holds the lock of a session directory, or undefined when nobody holds a live lock. */
export function sessionLockOwner(directory: string): LockOwner | undefined {
  const current = readOwner(join(directory, LOCK_FILE));
  return typeof current === 'object' && !isStale(current) ? current : undefined;
}

function tryCreate(path: string, owner: LockOwner): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw SessionWriteError.from(path, error, 'The session cannot be run without its lock file.');
  }
  try {
    writeSync(fd, `${JSON.stringify(owner)}\n`);
  } catch (error) {
    closeSync(fd);
    rmSync(path, { force: true });
    throw SessionWriteError.from(path, error, 'The session cannot be run without its lock file.');
  }
  closeSync(fd);
  return true;
}

function readOwner(path: string): LockOwner | 'missing' | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'unreadable';
  }
  try {
    const value = JSON.parse(text) as Partial<LockOwner>;
    if (typeof value.pid === 'number' && typeof value.hostname === 'string' && typeof value.since === 'string')
      return value as LockOwner;
  } catch {
    // A lock file cut short by a crash between create and write: see takeOverStale.
  }
  return 'unreadable';
}

/** True only when the owner is provably gone: same host and the pid is dead or was reused. */
function isStale(owner: LockOwner): boolean {
  if (owner.hostname !== hostname()) return false;
  if (!processExists(owner.pid)) return true;
  if (owner.start_time === undefined) return false;
  const now = startTimeField(owner.pid).start_time;
  return now !== undefined && now !== owner.start_time;
}

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

function startTimeField(pid: number): { start_time?: string } {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const value = fields[19];
    return value === undefined || value === '' ? {} : { start_time: value };
  } catch {
    return {};
  }
}

/**
 * Removes a stale lock. Two processes may find the same stale lock: each must not remove the
 * fresh lock the other has just created, so removal happens under a second O_EXCL file and only
 * after checking, under it, that the lock is still the stale one that was read.
 */
function takeOverStale(directory: string, path: string, stale: LockOwner | 'unreadable'): void {
  const guard = join(directory, `${LOCK_FILE}.takeover`);
  let fd: number;
  try {
    fd = openSync(guard, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw SessionWriteError.from(guard, error);
    // Another process is taking over right now, or died doing so (a guard older than a minute).
    removeIfOld(guard);
    return;
  }
  try {
    writeSync(fd, String(process.pid));
    const again = readOwner(path);
    const same =
      stale === 'unreadable'
        ? again === 'unreadable'
        : typeof again === 'object' && again.pid === stale.pid && again.since === stale.since;
    if (same) rmSync(path, { force: true });
  } finally {
    closeSync(fd);
    rmSync(guard, { force: true });
  }
}

function removeIfOld(path: string): void {
  if (ageMs(path) > 60_000) rmSync(path, { force: true });
}

function ageMs(path: string): number {
  const info = statSync(path, { throwIfNoEntry: false });
  return info === undefined ? 0 : Date.now() - info.mtimeMs;
}

function lockedError(directory: string, owner: LockOwner | undefined): SessionLockedError {
  if (owner === undefined) {
    return new SessionLockedError({
      message: `Session ${directory} is locked (its lock file ${join(directory, LOCK_FILE)} cannot be read). If no rho process runs this session, remove that file and try again.`,
      owner: { pid: 0, hostname: '', since: '' },
    });
  }
  const where =
    owner.hostname === hostname()
      ? `process ${owner.pid} on this host (${owner.hostname})`
      : `process ${owner.pid} on host ${owner.hostname}`;
  return new SessionLockedError({
    message: `Session ${directory} is already running in ${where} since ${owner.since}; only one process may write a session at a time. Wait for it to finish, or stop it (rho cancel), then resume.${owner.hostname === hostname() ? '' : ' A lock from another host is never taken over automatically: if that process is gone, remove the lock file.'}`,
    owner,
  });
}
