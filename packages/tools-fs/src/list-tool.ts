import { join } from 'node:path';
import { defineTool, type ExecutionBackend, type FileInfo } from '@rho/core';
import { backendOf, errorCode, errorMessage, resolvePath } from './internal/paths.js';
import type { ReadView } from '@rho/permissions';
import { readPathRefusal, viewOf } from './internal/read-path.js';
import { failure } from './internal/result.js';
import type { FsToolOptions } from './read-tool.js';

/** Most entries one listing shows. */
export const LIST_MAX_ENTRIES = 200;

interface Entry {
  name: string;
  path: string;
  /** lstat of the entry itself; undefined when it could not be read. */
  info: FileInfo | undefined;
  /** Whether it is a directory or a symlink to one. */
  isDirectory: boolean;
  /** Target of a symlink. */
  target: string | undefined;
}

/** `list`: a directory's entries with modes, sizes and times, or a tree of it. */
export function createListTool(options: FsToolOptions = {}) {
  return defineTool({
    name: 'list',
    description:
      'List a directory. By default one line per entry: permissions, size, modification time, name ' +
      '(directories first, then by name; directories end with "/", symlinks show "-> target"). ' +
      'With recursive=true, shows a tree down to max_depth levels below the first (default 3) with file sizes. ' +
      `Hidden entries (starting with ".") are left out unless show_hidden=true. At most ${LIST_MAX_ENTRIES} entries are shown.`,
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Directory to list.' },
        show_hidden: { type: 'boolean', description: 'Include entries whose name starts with "." (default false).' },
        recursive: { type: 'boolean', description: 'Show a tree of subdirectories (default false).' },
        max_depth: { type: 'integer', description: 'Levels of subdirectories shown in a tree (default 3).' },
      },
      required: ['path'],
      additionalProperties: false,
    },
    annotations: { readOnly: true },
    async handle({ arguments: args }, context) {
      if (!args.path) return failure('No path provided');
      const backend = backendOf(options.backend, context);
      const path = await resolvePath(backend, context.workingDir, args.path);
      const view = viewOf(options.view, backend, context);
      const refusal = await readPathRefusal(backend, path, view);
      if (refusal !== undefined) return refusal;
      const showHidden = args.show_hidden ?? false;
      let entries: Entry[];
      try {
        if ((await backend.stat(path)).type !== 'directory') return failure(`Not a directory: ${path}`);
        entries = await readEntries(backend, path, showHidden, view);
      } catch (error) {
        return listError(error, path);
      }
      if (args.recursive) {
        const lines: string[] = [];
        const counter = { items: 0 };
        await tree(backend, entries, '', 0, Math.max(0, args.max_depth ?? 3), showHidden, lines, counter, view);
        return {
          content: lines.length === 0 ? '(empty directory)' : lines.join('\n'),
          success: true,
          metadata: { path, recursive: true, item_count: counter.items },
        };
      }
      if (entries.length === 0) {
        return { content: '(empty directory)', success: true, metadata: { path, recursive: false, item_count: 0 } };
      }
      const shown = entries.slice(0, LIST_MAX_ENTRIES);
      const lines = shown.map(formatFlat);
      if (entries.length > LIST_MAX_ENTRIES) lines.push(`\n[Truncated at ${LIST_MAX_ENTRIES} entries]`);
      return {
        content: lines.join('\n'),
        success: true,
        metadata: { path, recursive: false, item_count: shown.length },
      };
    },
  });
}

async function readEntries(
  backend: ExecutionBackend,
  directory: string,
  showHidden: boolean,
  view?: ReadView,
): Promise<Entry[]> {
  // A directory hidden from the session (rho's home inside the working directory) is not listed.
  const names = (await backend.readdir(directory)).filter(
    (name) => (showHidden || !name.startsWith('.')) && view?.hiddenBy(join(directory, name)) === undefined,
  );
  const entries = await Promise.all(
    names.map(async (name): Promise<Entry> => {
      const path = join(directory, name);
      let info: FileInfo | undefined;
      try {
        info = await backend.lstat(path);
      } catch {
        return { name, path, info: undefined, isDirectory: false, target: undefined };
      }
      let isDirectory = info.type === 'directory';
      let target: string | undefined;
      if (info.type === 'symlink') {
        target = await backend.readlink(path).catch(() => '?');
        // A link to a directory is shown as one; a dangling link or a loop is not.
        isDirectory = await backend.stat(path).then(
          (resolved) => resolved.type === 'directory',
          () => false,
        );
      }
      return { name, path, info, isDirectory, target };
    }),
  );
  return entries.sort((left, right) => {
    if (left.isDirectory !== right.isDirectory) return left.isDirectory ? -1 : 1;
    const a = left.name.toLowerCase();
    const b = right.name.toLowerCase();
    return a < b ? -1 : a > b ? 1 : 0;
  });
}

function formatFlat(entry: Entry): string {
  if (entry.info === undefined) return `??????????  ?         ?                 ${entry.name}`;
  const mode = formatMode(entry.info.mode);
  const time = formatTime(entry.info.mtimeMs);
  if (entry.isDirectory) return `${mode}  ${'-'.padStart(8)}  ${time}  ${entry.name}/`;
  if (entry.info.type === 'symlink') return `${mode}  ${'-'.padStart(8)}  ${time}  ${entry.name} -> ${entry.target}`;
  return `${mode}  ${formatSize(entry.info.size).padStart(8)}  ${time}  ${entry.name}`;
}

async function tree(
  backend: ExecutionBackend,
  entries: Entry[],
  prefix: string,
  depth: number,
  maxDepth: number,
  showHidden: boolean,
  lines: string[],
  counter: { items: number },
  view?: ReadView,
): Promise<void> {
  for (const [index, entry] of entries.entries()) {
    if (lines.length >= LIST_MAX_ENTRIES) {
      lines.push(`${prefix}[... truncated]`);
      return;
    }
    const last = index === entries.length - 1;
    const connector = last ? '└── ' : '├── ';
    counter.items += 1;
    if (entry.info?.type === 'symlink') {
      // Never followed, so link loops cannot recurse.
      lines.push(`${prefix}${connector}${entry.name}${entry.isDirectory ? '/' : ''} -> ${entry.target}`);
      continue;
    }
    if (entry.isDirectory) {
      lines.push(`${prefix}${connector}${entry.name}/`);
      if (depth < maxDepth) {
        const childPrefix = prefix + (last ? '    ' : '│   ');
        let children: Entry[];
        try {
          children = await readEntries(backend, entry.path, showHidden, view);
        } catch {
          lines.push(`${childPrefix}[permission denied]`);
          continue;
        }
        await tree(backend, children, childPrefix, depth + 1, maxDepth, showHidden, lines, counter, view);
      }
      continue;
    }
    const size = entry.info === undefined ? '?' : formatSize(entry.info.size);
    lines.push(`${prefix}${connector}${entry.name} (${size})`);
  }
}

/** `ls`-style permission string, e.g. `drwxr-xr-x`. */
export function formatMode(mode: number): string {
  const typeBits = mode & 0o170000;
  const type =
    typeBits === 0o040000
      ? 'd'
      : typeBits === 0o120000
        ? 'l'
        : typeBits === 0o020000
          ? 'c'
          : typeBits === 0o060000
            ? 'b'
            : typeBits === 0o010000
              ? 'p'
              : typeBits === 0o140000
                ? 's'
                : '-';
  const triplet = (shift: number, special: number, specialChar: string): string => {
    const bits = (mode >> shift) & 7;
    const read = bits & 4 ? 'r' : '-';
    const write = bits & 2 ? 'w' : '-';
    let execute = bits & 1 ? 'x' : '-';
    if (mode & special) execute = bits & 1 ? specialChar : specialChar.toUpperCase();
    return read + write + execute;
  };
  return type + triplet(6, 0o4000, 's') + triplet(3, 0o2000, 's') + triplet(0, 0o1000, 't');
}

/** `512B`, `1.5KB`, `3.2MB`, ... */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  let value = bytes;
  for (const unit of ['KB', 'MB', 'GB']) {
    value /= 1024;
    if (value < 1024) return `${value.toFixed(1)}${unit}`;
  }
  return `${(value / 1024).toFixed(1)}TB`;
}

function formatTime(milliseconds: number): string {
  const date = new Date(milliseconds);
  const two = (value: number): string => String(value).padStart(2, '0');
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}`;
}

function listError(error: unknown, path: string) {
  switch (errorCode(error)) {
    case 'ENOENT':
      return failure(`Directory not found: ${path}`);
    case 'ENOTDIR':
      return failure(`Not a directory: ${path}`);
    case 'EACCES':
    case 'EPERM':
      return failure(`Permission denied: ${path}`);
    default:
      return failure(`Error listing directory: ${errorMessage(error)}`);
  }
}
