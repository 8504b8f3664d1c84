/** Writing a checkpoint's files back, byte for byte: contents, modes, symbolic links, deletions. */
import { spawn } from 'node:child_process';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  renameSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { WorkspaceError } from './errors.js';
import { git, splitNul } from './git.js';

/** One entry of a tree: `ls-tree -r -l`. */
export interface TreeEntry {
  mode: string;
  type: string;
  id: string;
  size: number;
}

/** The files of a commit's tree, by path, and every folder that holds one. */
export async function readTree(
  prefix: string[],
  cwd: string,
  commit: string,
): Promise<{ entries: Map<string, TreeEntry>; folders: Set<string> }> {
  const output = await git([...prefix, 'ls-tree', '-r', '-l', '-z', '--full-tree', commit], {
    cwd,
    isolated: true,
    maxBytes: 256 * 1024 * 1024,
  });
  const entries = new Map<string, TreeEntry>();
  const folders = new Set<string>();
  for (const line of splitNul(output.stdout)) {
    const tab = line.indexOf('\t');
    const [mode, type, id, size] = line.slice(0, tab).split(/ +/) as [string, string, string, string];
    const path = line.slice(tab + 1);
    entries.set(path, { mode, type, id, size: size === '-' ? 0 : Number(size) });
    for (let folder = posix.dirname(path); folder !== '.'; folder = posix.dirname(folder)) {
      if (folders.has(folder)) break;
      folders.add(folder);
    }
  }
  return { entries, folders };
}

const BATCH_BYTES = 64 * 1024 * 1024;

/** The contents of blobs, read with one `git cat-file --batch` per 64 MiB. */
async function readBlobs(prefix: string[], cwd: string, ids: string[]): Promise<Map<string, Buffer>> {
  const contents = new Map<string, Buffer>();
  if (ids.length === 0) return contents;
  const output: Buffer = await new Promise((resolve, reject) => {
    const child = spawn('git', [...prefix, 'cat-file', '--batch'], {
      cwd,
      env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(Buffer.concat(chunks))
        : reject(
            new WorkspaceError('workspace_git', { message: `git cat-file --batch failed (exit ${code}) in ${cwd}` }),
          ),
    );
    child.stdin.end(`${ids.join('\n')}\n`);
  });
  let at = 0;
  for (const id of ids) {
    const end = output.indexOf(10, at);
    const header = output.subarray(at, end).toString('utf8').split(' ');
    if (header[1] !== 'blob')
      throw new WorkspaceError('workspace_corrupt', { message: `The checkpoint store in ${cwd} lacks object ${id}.` });
    const size = Number(header[2]);
    contents.set(id, output.subarray(end + 1, end + 1 + size));
    at = end + 1 + size + 1;
  }
  return contents;
}

/** Removes `paths` (files that did not exist then), and the folders they leave empty that did not exist then either. */
export function removeFiles(root: string, paths: string[], foldersThen: Set<string>): void {
  for (const path of paths) {
    rmSync(join(root, path), { force: true });
    for (let folder = posix.dirname(path); folder !== '.' && !foldersThen.has(folder); folder = posix.dirname(folder)) {
      try {
        rmdirSync(join(root, folder));
      } catch {
        break; // Not empty (or gone already): it stays.
      }
    }
  }
}

/** Writes `paths` back as `entries` has them: each to a temporary name in its folder, renamed into place. */
export async function restoreFiles(
  prefix: string[],
  root: string,
  paths: string[],
  entries: Map<string, TreeEntry>,
): Promise<void> {
  const files = paths.map((path) => ({ path, entry: entries.get(path)! })).filter(({ entry }) => entry.type === 'blob');
  for (let start = 0; start < files.length;) {
    let end = start;
    let bytes = 0;
    while (end < files.length && (end === start || bytes + files[end]!.entry.size <= BATCH_BYTES)) {
      bytes += files[end]!.entry.size;
      end += 1;
    }
    const batch = files.slice(start, end);
    const contents = await readBlobs(prefix, root, [...new Set(batch.map(({ entry }) => entry.id))]);
    for (const { path, entry } of batch) write(join(root, path), entry, contents.get(entry.id)!);
    start = end;
  }
}

function write(target: string, entry: TreeEntry, content: Buffer): void {
  const folder = dirname(target);
  mkdirSync(folder, { recursive: true });
  const temporary = join(folder, `.rho-undo-${process.pid}-${Math.random().toString(36).slice(2)}`);
  try {
    if (entry.mode === '120000') symlinkSync(content.toString('utf8'), temporary);
    else {
      writeFileSync(temporary, content, { mode: 0o600 });
      chmodSync(temporary, entry.mode === '100755' ? 0o755 : 0o644);
    }
    if (lstatSync(target, { throwIfNoEntry: false })?.isDirectory() === true) rmdirSync(target);
    renameSync(temporary, target);
  } catch (error) {
    try {
      unlinkSync(temporary);
    } catch {
      // Never made.
    }
    throw new WorkspaceError('workspace_io', {
      message: `Cannot write ${target} back: ${(error as Error).message}. Files written before it stay as the checkpoint has them.`,
      cause: error,
    });
  }
}
