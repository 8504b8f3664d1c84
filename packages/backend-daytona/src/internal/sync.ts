/**
 * Bringing the sandbox's working directory back to this machine (issue 37): what changed there
 * since a time (the upload, or the last sync) is written into a local folder (a session's
 * workspace), which `rho diff` and `rho apply` then review like any isolated workspace.
 *
 * What changed is what the sandbox's own file system says: an entry whose status-change time
 * (ctime, which no program can set back, unlike the modification time `touch` or `tar` sets) is
 * not older than the time, or one the local folder does not hold as the same kind. Entries the
 * local folder holds and the sandbox does not are removed, except symbolic links, which never
 * travel (an upload leaves them out). `.git` directories are left alone on both sides: a review
 * never shows them.
 *
 * All changed files are downloaded into a staging folder beside the local one first, so a failed
 * download changes nothing; the bounds are checked on the listing, before any download.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { basename, dirname, join, posix } from 'node:path';
import { DaytonaBackendError } from '../errors.js';
import type { SandboxConnection } from './sandbox-connection.js';
import { shellQuote } from './shell.js';

/** Files fetched per request. */
const BATCH_FILES = 50;
/** The largest listing read back (about 300,000 entries). */
const MAX_LISTING_BYTES = 64 * 1024 * 1024;

/** How much one sync may bring back. */
export interface SyncLimits {
  /** Changed files downloaded at most (default 10,000). */
  maxFiles: number;
  /** Their total size at most, in bytes (default 512 MiB). */
  maxBytes: number;
}

export const DEFAULT_SYNC_LIMITS: SyncLimits = { maxFiles: 10_000, maxBytes: 512 * 1024 * 1024 };

/** What a sync changed in the local folder. */
export interface SyncSummary {
  /** Files written (new or changed) and symbolic links made. */
  written: number;
  /** Files, links and directories removed (gone from the sandbox). */
  removed: number;
  /** Bytes downloaded. */
  bytes: number;
  /** Sandbox entries that cannot travel (sockets, pipes, devices), relative paths. */
  skipped: string[];
  /** The sandbox's file clock when the listing began: the time of the next sync. */
  listedAt: string;
}

interface RemoteEntry {
  kind: string;
  mode: number;
  size: number;
  ctime: number;
  target: string;
}

type LocalKind = 'f' | 'd' | 'l' | 'o';

/**
 * The sandbox's file clock now: the status-change time of a file made for the purpose in
 * `remoteRoot` and removed at once (the same file system, so the same clock and granularity as
 * the files compared with it), in `find`'s `%C@` form. Taken before the agent starts and
 * between runs, never while it works.
 */
export async function remoteNow(connection: SandboxConnection, remoteRoot: string): Promise<string> {
  const marker = shellQuote(posix.join(remoteRoot, `.rho-clock-${randomBytes(6).toString('hex')}`));
  const result = await connection.exec(
    `: > ${marker} && find ${marker} -printf '%C@'; status=$?; rm -f ${marker}; exit $status`,
  );
  const text = result.output.trim();
  if (result.exitCode !== 0 || !/^\d+(\.\d+)?$/.test(text))
    throw new DaytonaBackendError({
      message: `Cannot read the sandbox's file clock in ${remoteRoot}: ${text.slice(0, 500) || `exit ${result.exitCode}`}`,
    });
  return text;
}

/** Every entry below `remoteRoot` but `.git` directories: kind, mode, size, ctime, path, link target. */
async function listRemote(connection: SandboxConnection, remoteRoot: string): Promise<Map<string, RemoteEntry>> {
  const listing = `/tmp/rho-sync-${randomBytes(6).toString('hex')}`;
  const root = shellQuote(remoteRoot);
  const file = shellQuote(listing);
  const made = await connection.exec(
    `[ -d ${root} ] || { echo "rho-errno:ENOENT ${remoteRoot} is not a directory"; exit 1; }; ` +
      `find ${root} -mindepth 1 \\( -name .git -prune \\) -o -printf '%y %m %s %C@ %P\\0%l\\0' > ${file} 2>/dev/null; ` +
      `stat -c %s ${file}`,
  );
  const size = Number(made.output.trim().split('\n').pop());
  try {
    if (made.exitCode !== 0 || !Number.isFinite(size))
      throw new DaytonaBackendError({
        message: `Cannot list ${remoteRoot} in the sandbox: ${made.output.trim().slice(0, 500) || `exit ${made.exitCode}`}`,
      });
    if (size > MAX_LISTING_BYTES)
      throw new DaytonaBackendError({
        message: `The listing of ${remoteRoot} in the sandbox is ${Math.round(size / 1048576)} MB, more than rho reads back (${MAX_LISTING_BYTES / 1048576} MB): too many files to review. Fetch what you need with /download.`,
      });
    const data = size === 0 ? Buffer.alloc(0) : await connection.sandbox.fs.downloadFile(listing);
    return parseListing(data);
  } finally {
    await connection.exec(`rm -f ${file}`).catch(() => undefined);
  }
}

/** `find -printf '%y %m %s %C@ %P\0%l\0'` output, by relative path. */
export function parseListing(data: Buffer): Map<string, RemoteEntry> {
  const entries = new Map<string, RemoteEntry>();
  const fields = data.toString('utf8').split('\0');
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const match = /^(\S) ([0-7]+) (\d+) (\d+(?:\.\d+)?) (.+)$/s.exec(fields[index]!);
    if (match === null) continue;
    const [, kind = '', mode = '0', size = '0', ctime = '0', path = ''] = match;
    entries.set(path, {
      kind,
      mode: Number.parseInt(mode, 8),
      size: Number(size),
      ctime: Number(ctime),
      target: fields[index + 1] ?? '',
    });
  }
  return entries;
}

/** The local folder's entries but `.git` directories, by relative path (POSIX separators). */
async function listLocal(root: string): Promise<Map<string, LocalKind>> {
  const entries = new Map<string, LocalKind>();
  const walk = async (directory: string, prefix: string): Promise<void> => {
    for (const entry of await fs.readdir(directory, { withFileTypes: true })) {
      if (entry.name === '.git' && entry.isDirectory()) continue;
      const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      if (entry.isDirectory()) {
        entries.set(path, 'd');
        await walk(join(directory, entry.name), path);
      } else entries.set(path, entry.isFile() ? 'f' : entry.isSymbolicLink() ? 'l' : 'o');
    }
  };
  await walk(root, '');
  return entries;
}

const localPath = (root: string, path: string) => join(root, ...path.split('/'));

/**
 * Writes what changed in the sandbox's `remoteRoot` since `since` (the sandbox's file clock, from
 * {@link remoteNow}) into `localRoot`, and removes what the sandbox no longer has. Throws a
 * {@link DaytonaBackendError}, having changed nothing, when the changes exceed `limits` or a
 * download fails.
 */
export async function syncDown(
  connection: SandboxConnection,
  remoteRoot: string,
  localRoot: string,
  since: string,
  limits: SyncLimits = DEFAULT_SYNC_LIMITS,
): Promise<SyncSummary> {
  const listedAt = await remoteNow(connection, remoteRoot);
  const remote = await listRemote(connection, remoteRoot);
  const local = await listLocal(localRoot);
  // Not older than: a change in the same tick of the file clock as the time counts.
  const threshold = Number(since);
  const summary: SyncSummary = { written: 0, removed: 0, bytes: 0, skipped: [], listedAt };

  const downloads: { path: string; mode: number; size: number }[] = [];
  const links: { path: string; target: string }[] = [];
  const directories: string[] = [];
  for (const [path, entry] of remote) {
    const have = local.get(path);
    if (entry.kind === 'f') {
      if (have !== 'f' || entry.ctime >= threshold)
        downloads.push({ path, mode: entry.mode & 0o777, size: entry.size });
    } else if (entry.kind === 'd') {
      if (have !== 'd') directories.push(path);
    } else if (entry.kind === 'l') {
      const same =
        have === 'l' && (await fs.readlink(localPath(localRoot, path)).catch(() => undefined)) === entry.target;
      if (!same) links.push({ path, target: entry.target });
    } else summary.skipped.push(path);
  }
  const bytes = downloads.reduce((total, file) => total + file.size, 0);
  if (downloads.length > limits.maxFiles || bytes > limits.maxBytes)
    throw new DaytonaBackendError({
      message: `${downloads.length} files (${Math.ceil(bytes / 1048576)} MB) changed in ${remoteRoot} in the sandbox, more than rho brings back for review (${limits.maxFiles} files, ${Math.round(limits.maxBytes / 1048576)} MB): nothing was brought back. Fetch what you need with /download, or keep the sandbox (keep_sandbox) and look there.`,
    });

  // Downloaded first, into a staging folder beside the workspace: a failure changes nothing.
  const staging = join(dirname(localRoot), `.${basename(localRoot)}.sync-${randomBytes(4).toString('hex')}`);
  await fs.mkdir(staging, { recursive: true, mode: 0o700 });
  try {
    for (let index = 0; index < downloads.length; index += BATCH_FILES) {
      const batch = downloads.slice(index, index + BATCH_FILES);
      const results = await connection.sandbox.fs.downloadFiles(
        batch.map((file, position) => ({
          source: posix.join(remoteRoot, file.path),
          destination: join(staging, String(index + position)),
        })),
      );
      for (const [position, result] of results.entries()) {
        if (result.error !== undefined)
          throw new DaytonaBackendError({
            message: `Downloading ${batch[position]?.path ?? result.source} from the sandbox failed: ${result.error}. Nothing was brought back.`,
          });
      }
    }

    // What the sandbox no longer has goes (links and special files stay: they never travel), deepest first.
    const gone = [...local.entries()]
      .filter(([path, kind]) => kind !== 'l' && kind !== 'o' && !remote.has(path))
      .sort(([a], [b]) => b.length - a.length);
    for (const [path, kind] of gone) {
      const target = localPath(localRoot, path);
      if (kind === 'd') {
        // Only when empty: what stayed in it (a link) keeps it.
        const removed = await fs.rmdir(target).then(
          () => true,
          () => false,
        );
        if (removed) summary.removed += 1;
      } else {
        await fs.rm(target, { force: true });
        summary.removed += 1;
      }
    }
    const clear = async (path: string, keep: LocalKind | undefined) => {
      const kind = local.get(path);
      if (kind !== undefined && kind !== keep)
        await fs.rm(localPath(localRoot, path), { recursive: true, force: true });
    };
    for (const path of directories.sort((a, b) => a.length - b.length)) {
      await clear(path, 'd');
      await fs.mkdir(localPath(localRoot, path), { recursive: true });
    }
    for (const [position, file] of downloads.entries()) {
      await clear(file.path, 'f');
      const target = localPath(localRoot, file.path);
      await fs.mkdir(dirname(target), { recursive: true });
      await fs.rename(join(staging, String(position)), target);
      await fs.chmod(target, file.mode);
      summary.written += 1;
      summary.bytes += file.size;
    }
    for (const link of links) {
      await clear(link.path, undefined);
      const target = localPath(localRoot, link.path);
      await fs.mkdir(dirname(target), { recursive: true });
      await fs.symlink(link.target, target);
      summary.written += 1;
    }
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
  summary.skipped.sort();
  return summary;
}
