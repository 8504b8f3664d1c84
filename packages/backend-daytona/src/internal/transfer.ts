import { promises as fs } from 'node:fs';
import { join, posix } from 'node:path';
import type { SandboxConnection } from './sandbox-connection.js';
import { errnoError, sdkErrnoError } from './remote-files.js';
import { shellQuote } from './shell.js';

/** Files sent or fetched per request. */
const BATCH_FILES = 50;

/** What a transfer moved. */
export interface TransferSummary {
  /** Regular files copied. */
  files: number;
  /** Their total size in bytes. */
  bytes: number;
  /** Entries left out: symbolic links and special files (only regular files and directories move). */
  skipped: string[];
}

/** Copies a local file or directory tree into the sandbox, creating `remotePath`'s directories. */
export async function uploadPath(
  connection: SandboxConnection,
  localPath: string,
  remotePath: string,
): Promise<TransferSummary> {
  const summary: TransferSummary = { files: 0, bytes: 0, skipped: [] };
  const root = await fs.stat(localPath);
  const sandboxFs = connection.sandbox.fs;
  if (root.isFile()) {
    await sandboxFs.createFolder(posix.dirname(remotePath), '755').catch(() => undefined);
    await sandboxFs.uploadFile(localPath, remotePath);
    return { files: 1, bytes: root.size, skipped: [] };
  }
  const directories: string[] = [remotePath];
  const files: { source: string; destination: string; size: number; mode: number }[] = [];
  const walk = async (local: string, remote: string): Promise<void> => {
    const entries = await fs.readdir(local, { withFileTypes: true });
    for (const entry of entries) {
      const localChild = join(local, entry.name);
      const remoteChild = posix.join(remote, entry.name);
      if (entry.isDirectory()) {
        directories.push(remoteChild);
        await walk(localChild, remoteChild);
      } else if (entry.isFile()) {
        const stats = await fs.stat(localChild);
        files.push({ source: localChild, destination: remoteChild, size: stats.size, mode: stats.mode & 0o777 });
      } else {
        summary.skipped.push(localChild);
      }
    }
  };
  await walk(localPath, remotePath);
  try {
    for (const directory of directories) await sandboxFs.createFolder(directory, '755');
    for (let index = 0; index < files.length; index += BATCH_FILES) {
      const batch = files.slice(index, index + BATCH_FILES);
      await sandboxFs.uploadFiles(batch.map(({ source, destination }) => ({ source, destination })));
      for (const file of batch) {
        summary.files += 1;
        summary.bytes += file.size;
      }
    }
  } catch (error) {
    throw sdkErrnoError(error, remotePath, 'upload');
  }
  await keepModes(connection, files);
  return summary;
}

/** The most bytes of one `chmod` command line. */
const MAX_COMMAND_BYTES = 64 * 1024;

/**
 * The upload API writes every file with the daemon's default mode: files whose mode is not 0644
 * (scripts, executables, private files) get their own back, a few commands for a whole tree.
 */
async function keepModes(
  connection: SandboxConnection,
  files: readonly { destination: string; mode: number }[],
): Promise<void> {
  const byMode = new Map<number, string[]>();
  for (const file of files) {
    if (file.mode === 0o644) continue;
    byMode.set(file.mode, [...(byMode.get(file.mode) ?? []), file.destination]);
  }
  for (const [mode, paths] of byMode) {
    let words: string[] = [];
    let length = 0;
    const flush = async () => {
      if (words.length === 0) return;
      const result = await connection.exec(`chmod ${mode.toString(8)} -- ${words.join(' ')}`);
      if (result.exitCode !== 0) throw errnoError(result.output, paths[0] ?? '', 'chmod');
      words = [];
      length = 0;
    };
    for (const path of paths) {
      const word = shellQuote(path);
      if (length + word.length > MAX_COMMAND_BYTES) await flush();
      words.push(word);
      length += word.length + 1;
    }
    await flush();
  }
}

/** Copies a file or directory tree of the sandbox to `localPath`, creating local directories. */
export async function downloadPath(
  connection: SandboxConnection,
  remotePath: string,
  localPath: string,
): Promise<TransferSummary> {
  const listing = await connection.exec(
    `[ -e ${shellQuote(remotePath)} ] || { echo rho-errno:ENOENT; exit 1; }; ` +
      `find ${shellQuote(remotePath)} -mindepth 0 -printf '%y %s %P\\n' 2>&1`,
  );
  if (listing.exitCode !== 0) throw errnoError(listing.output, remotePath, 'download');
  const summary: TransferSummary = { files: 0, bytes: 0, skipped: [] };
  const files: { source: string; destination: string; size: number }[] = [];
  for (const line of listing.output.split('\n')) {
    const match = /^(\S) (\d+) (.*)$/.exec(line);
    if (match === null) continue;
    const [, kind, size, relative = ''] = match;
    const source = relative === '' ? remotePath : posix.join(remotePath, relative);
    const destination = relative === '' ? localPath : join(localPath, ...relative.split('/'));
    if (kind === 'd') await fs.mkdir(destination, { recursive: true });
    else if (kind === 'f') files.push({ source, destination, size: Number(size) });
    else summary.skipped.push(source);
  }
  for (let index = 0; index < files.length; index += BATCH_FILES) {
    const batch = files.slice(index, index + BATCH_FILES);
    const results = await connection.sandbox.fs.downloadFiles(
      batch.map(({ source, destination }) => ({ source, destination })),
    );
    for (const [position, result] of results.entries()) {
      const file = batch[position];
      if (file === undefined) continue;
      if (result.error !== undefined) throw errnoError(result.error, file.source, 'download');
      summary.files += 1;
      summary.bytes += file.size;
    }
  }
  return summary;
}
