import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  unlinkSync,
} from 'node:fs';
import type { Stats } from 'node:fs';
import { open } from 'node:fs/promises';
import type { FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, sep } from 'node:path';

/**
 * A file location decided by {@link checkWritePath}, held open: the parent directory is a file
 * descriptor reached from `/` one component at a time without following any link, and every
 * operation below names the file relative to that descriptor. Nothing resolves the path again, so
 * a symbolic link swapped into the path after the decision cannot redirect a read or a write.
 * Call {@link WriteTarget.close} when done.
 */
export interface WriteTarget {
  /** The decided real path (for messages; operations do not resolve it). */
  readonly realPath: string;
  /** Whether operations go through the directory handle (`handle`, Linux `/proc`) or the checked-path fallback. */
  readonly method: 'handle' | 'checked-path';
  /** Information about the file itself (a link is not followed), or undefined when nothing is there. */
  stat(): Promise<Stats | undefined>;
  /** Reads the whole file (never through a link); rejects with `EFBIG` beyond `maxBytes`. */
  read(maxBytes: number): Promise<Uint8Array>;
  /** Creates the file, which must not exist (`O_EXCL`, never through a link), with `data`. */
  createExclusive(data: Uint8Array, mode?: number): Promise<void>;
  /** Creates the file, which must not exist, and returns it open for writing (streamed exports). */
  openExclusive(mode?: number): Promise<FileHandle>;
  /**
   * Replaces (or creates) the file atomically: a temporary file in the same directory, renamed
   * over the name; an existing file keeps its permission bits. A link found at the name is refused.
   */
  replace(data: Uint8Array): Promise<void>;
  /** Removes the file (a failed export's partial output). */
  remove(): Promise<void>;
  /** Closes the directory handle. */
  close(): void;
}

/** Options of {@link openWriteTarget}. */
export interface OpenWriteTargetOptions {
  /** Create missing parent directories (each one relative to its parent's handle). */
  createParents?: boolean;
  /**
   * Called once the parent directory is held open, before the file is touched: the seam tests use
   * to swap links into the path at the worst moment and prove the write still lands where decided.
   */
  onParentOpened?: () => void | Promise<void>;
  /** How to reach the parent: the default is `handle` where `/proc/self/fd` exists, else `checked-path` (tests force the fallback). */
  method?: 'handle' | 'checked-path';
}

const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** Whether this system names an open directory as a path (`/proc/self/fd/N`, Linux). */
const HAS_PROC_FD = process.platform === 'linux' && existsSync('/proc/self/fd');

function changed(path: string, detail: string): NodeJS.ErrnoException {
  return Object.assign(
    new Error(`The path changed after the write was allowed: ${path} ${detail}; nothing was written.`),
    { code: 'ECHANGED', path },
  );
}

/**
 * Opens the parent directory of a decided real path (an absolute path without links, as
 * {@link checkWritePath} returns it) component by component from `/` with
 * `O_DIRECTORY | O_NOFOLLOW`, creating missing directories when asked, and returns a
 * {@link WriteTarget} that reads and writes the final name relative to that handle.
 *
 * On Linux the handle is named `/proc/self/fd/N`, so the kernel resolves nothing but the final
 * name, itself opened with `O_NOFOLLOW`/`O_EXCL` or replaced by `rename` (which never follows a
 * link). Where `/proc/self/fd` is missing (macOS, the BSDs), every directory of the path is held
 * open and its device and inode are compared with the path's again right before and after each
 * operation; a change fails the operation with `ECHANGED`. That fallback leaves a window of one
 * system call between the last comparison and the operation, open only to a process of the same
 * user that can already write those directories.
 *
 * Rejects with `ECHANGED` when a component turned into a link or a file after the decision.
 */
export async function openWriteTarget(realPath: string, options: OpenWriteTargetOptions = {}): Promise<WriteTarget> {
  if (!isAbsolute(realPath)) throw new TypeError(`openWriteTarget needs an absolute real path, got ${realPath}`);
  const name = basename(realPath);
  const parent = dirname(realPath);
  const components = parent.split(sep).filter(Boolean);
  const useHandle = (options.method ?? (HAS_PROC_FD ? 'handle' : 'checked-path')) === 'handle';
  if (useHandle && !HAS_PROC_FD) throw new Error('This system has no /proc/self/fd; use the checked-path method.');
  const chain: { path: string; fd: number }[] = [];
  let current: string = sep;
  try {
    chain.push({ path: current, fd: openSync(current, constants.O_RDONLY | constants.O_DIRECTORY) });
    for (const component of components) {
      const held = chain.at(-1)!;
      const childPath = join(current, component);
      const via = useHandle ? `/proc/self/fd/${held.fd}/${component}` : childPath;
      let fd: number;
      try {
        fd = openDirectory(via, useHandle);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' && options.createParents === true) {
          try {
            mkdirSync(via, 0o777);
          } catch (mkdirError) {
            if ((mkdirError as NodeJS.ErrnoException).code !== 'EEXIST') throw mkdirError;
          }
          try {
            fd = openDirectory(via, useHandle);
          } catch (again) {
            throw translate(again, childPath);
          }
        } else {
          throw translate(error, childPath);
        }
      }
      chain.push({ path: childPath, fd });
      if (!useHandle) verifyChain(chain);
      current = childPath;
    }
  } catch (error) {
    for (const { fd } of chain) closeSync(fd);
    throw error;
  }
  await options.onParentOpened?.();
  return useHandle ? handleTarget(realPath, name, chain) : checkedPathTarget(realPath, name, chain);
}

/** Linux's `O_PATH`: a handle to a directory the user may search but not list (mode `--x`). */
const O_PATH = 0o10000000;

function openDirectory(path: string, useHandle: boolean): number {
  try {
    return openSync(path, DIRECTORY_FLAGS);
  } catch (error) {
    if (!useHandle || (error as NodeJS.ErrnoException).code !== 'EACCES') throw error;
    return openSync(path, O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  }
}

function translate(error: unknown, path: string): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ELOOP' || code === 'ENOTDIR')
    return changed(path, 'is no longer a directory (a link or a file was put there)');
  return error;
}

/** Every held directory is still the one its path names (the fallback without `/proc`). */
function verifyChain(chain: readonly { path: string; fd: number }[]): void {
  for (const { path, fd } of chain) {
    const held = fstatSync(fd);
    let now: Stats;
    try {
      now = lstatSync(path);
    } catch {
      throw changed(path, 'was removed or renamed');
    }
    if (!now.isDirectory() || now.dev !== held.dev || now.ino !== held.ino) throw changed(path, 'was replaced');
  }
}

function closeChain(chain: readonly { fd: number }[]): void {
  for (const { fd } of chain) {
    try {
      closeSync(fd);
    } catch {
      // Already closed.
    }
  }
}

function temporaryName(name: string): string {
  return `.${name}.${randomBytes(6).toString('hex')}.tmp`;
}

async function readAll(handle: FileHandle, path: string, maxBytes: number): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const buffer = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
    if (bytesRead === 0) break;
    chunks.push(buffer.subarray(0, bytesRead));
    total += bytesRead;
    if (total > maxBytes)
      throw Object.assign(new Error(`EFBIG: file is larger than ${maxBytes} bytes, read '${path}'`), {
        code: 'EFBIG',
        path,
      });
  }
  return Buffer.concat(chunks, total);
}

async function writeAndClose(handle: FileHandle, data: Uint8Array, mode?: number): Promise<void> {
  try {
    await handle.writeFile(data);
    if (mode !== undefined) await handle.chmod(mode);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Replaces `name` (a regular file or nothing) with `data` through a temporary file in the same
 * directory, keeping the old file's mode; `create` opens the temporary file, `beforeRename`
 * proves the directory is still the decided one. Both ways of reaching the directory use it.
 */
async function replaceThrough(
  realPath: string,
  name: string,
  at: (entry: string) => string,
  data: Uint8Array,
  create: (entry: string, mode: number) => Promise<FileHandle>,
  beforeRename: () => void = () => undefined,
): Promise<void> {
  const existing = lstatOrUndefined(at(name));
  if (existing?.isSymbolicLink() === true) throw changed(realPath, 'is now a symbolic link');
  if (existing !== undefined && !existing.isFile())
    throw Object.assign(new Error(`EISDIR: ${realPath} is not a regular file`), { code: 'EISDIR', path: realPath });
  const mode = existing === undefined ? undefined : existing.mode & 0o7777;
  const temporary = temporaryName(name);
  const handle = await create(temporary, mode ?? 0o666);
  try {
    await writeAndClose(handle, data, mode);
    beforeRename();
    renameSync(at(temporary), at(name));
  } catch (error) {
    try {
      unlinkSync(at(temporary));
    } catch {
      // Already renamed or never created.
    }
    throw error;
  }
}

/** Linux: the parent is `/proc/self/fd/N`; only the final name is ever resolved. */
function handleTarget(realPath: string, name: string, chain: { path: string; fd: number }[]): WriteTarget {
  const directory = `/proc/self/fd/${chain.at(-1)!.fd}`;
  const at = (entry: string) => `${directory}/${entry}`;
  const statAt = (entry: string): Stats | undefined => lstatOrUndefined(at(entry));
  return {
    realPath,
    method: 'handle',
    stat: async () => statAt(name),
    async read(maxBytes) {
      const handle = await open(at(name), constants.O_RDONLY | constants.O_NOFOLLOW).catch((error: unknown) => {
        throw (error as NodeJS.ErrnoException).code === 'ELOOP' ? changed(realPath, 'is now a symbolic link') : error;
      });
      try {
        return await readAll(handle, realPath, maxBytes);
      } finally {
        await handle.close();
      }
    },
    async createExclusive(data, mode = 0o666) {
      const handle = await open(at(name), CREATE_FLAGS, mode);
      try {
        await handle.writeFile(data);
      } catch (error) {
        await handle.close();
        try {
          unlinkSync(at(name));
        } catch {
          // Already gone; the write's error is the one to report.
        }
        throw error;
      }
      await handle.close();
    },
    openExclusive: async (mode = 0o666) => open(at(name), CREATE_FLAGS, mode),
    replace: (data) => replaceThrough(realPath, name, at, data, (entry, mode) => open(at(entry), CREATE_FLAGS, mode)),
    async remove() {
      unlinkSync(at(name));
    },
    close: () => closeChain(chain),
  };
}

/** Without `/proc/self/fd`: full paths, with the held directories compared before and after each step. */
function checkedPathTarget(realPath: string, name: string, chain: { path: string; fd: number }[]): WriteTarget {
  const directory = chain.at(-1)!.path;
  const at = (entry: string) => join(directory, entry);
  const statAt = (entry: string): Stats | undefined => lstatOrUndefined(at(entry));
  /** Opens a new file by path, then proves it is where the held handles say before any data goes in. */
  const createChecked = async (entry: string, mode: number): Promise<FileHandle> => {
    verifyChain(chain);
    const handle = await open(at(entry), CREATE_FLAGS, mode);
    try {
      verifyChain(chain);
      const opened = await handle.stat();
      const there = lstatSync(at(entry));
      if (opened.dev !== there.dev || opened.ino !== there.ino) throw changed(at(entry), 'was replaced');
    } catch (error) {
      await handle.close();
      throw error;
    }
    return handle;
  };
  return {
    realPath,
    method: 'checked-path',
    stat: async () => {
      verifyChain(chain);
      return statAt(name);
    },
    async read(maxBytes) {
      verifyChain(chain);
      const handle = await open(at(name), constants.O_RDONLY | constants.O_NOFOLLOW);
      try {
        verifyChain(chain);
        return await readAll(handle, realPath, maxBytes);
      } finally {
        await handle.close();
      }
    },
    async createExclusive(data, mode = 0o666) {
      const handle = await createChecked(name, mode);
      try {
        await handle.writeFile(data);
      } finally {
        await handle.close();
      }
    },
    openExclusive: async (mode = 0o666) => createChecked(name, mode),
    replace: (data) => replaceThrough(realPath, name, at, data, createChecked, () => verifyChain(chain)),
    async remove() {
      verifyChain(chain);
      unlinkSync(at(name));
    },
    close: () => closeChain(chain),
  };
}
