import { existsSync, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { emptyFile, type ReadView, SYSTEM_READ_ROOTS, within } from './read-view.js';

/** What the mounts of one sandboxed process need besides the view. */
export interface ViewMountOptions {
  /** Bind the working directory read-write. */
  writableCwd?: boolean;
  /** More directories bound read-write (the profile's write roots, for the developer shell). */
  writable?: readonly string[];
  /** Whether the process has the host's network: then the resolver configuration is made visible. */
  allowNetwork: boolean;
}

/** bubblewrap's mount arguments of a view, in three parts placed around the sandbox's own /dev, /proc and /tmp. */
export interface ViewMounts {
  /** The system directories (before the private /tmp). */
  system: string[];
  /** The working directory, read paths, writable directories, hidden directories and masks (after it). */
  view: string[];
  /** Made read-only last, once every mount point in them is made. */
  remount: string[];
}

function depth(path: string): number {
  return path === '/' ? 0 : path.split('/').length - 1;
}

function isDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * The bubblewrap mounts of a read view: the system directories read-only (links such as `/bin`
 * on a merged-/usr system kept as links), the working directory and the read paths read-only
 * (or read-write as asked), the hidden directories that lie inside them behind an empty
 * read-only tmpfs, and every mask of the view (an empty file over a secret file, an empty tmpfs
 * over a secret directory, a sanitized copy over a git config). Nothing else of the host exists
 * inside: the root is an empty tmpfs.
 */
export function viewMounts(view: ReadView, options: ViewMountOptions): ViewMounts {
  const system: string[] = [];
  for (const root of SYSTEM_READ_ROOTS) {
    let info;
    try {
      info = lstatSync(root);
    } catch {
      continue;
    }
    if (info.isSymbolicLink()) system.push('--symlink', readlinkSync(root), root);
    else if (info.isDirectory()) system.push('--ro-bind', root, root);
  }
  type Operation = { path: string; args: string[] };
  const operations: Operation[] = [];
  const bound: string[] = [...SYSTEM_READ_ROOTS];
  const writable = new Set(options.writable ?? []);
  const seen = new Set<string>();
  for (const root of view.roots) {
    if (root.rule === 'read.system' || seen.has(root.path) || !existsSync(root.path)) continue;
    seen.add(root.path);
    const rw = (root.rule === 'read.working-dir' && options.writableCwd === true) || writable.has(root.path);
    operations.push({ path: root.path, args: [rw ? '--bind' : '--ro-bind', root.path, root.path] });
    bound.push(root.path);
  }
  for (const path of writable) {
    if (seen.has(path) || !isDirectory(path)) continue;
    seen.add(path);
    operations.push({ path, args: ['--bind', path, path] });
    bound.push(path);
  }
  const remount: string[] = [];
  for (const directory of view.hidden) {
    // Only a hidden directory inside a visible one needs hiding: the rest of the host is absent.
    if (!bound.some((root) => within(directory, root) && directory !== root) || !isDirectory(directory)) continue;
    operations.push({ path: directory, args: ['--tmpfs', directory] });
    remount.push('--remount-ro', directory);
  }
  // Parents before children: a bind inside a hidden directory (the working directory in rho's home) shows again.
  operations.sort((a, b) => depth(a.path) - depth(b.path));
  const view_: string[] = operations.flatMap((operation) => operation.args);
  if (options.allowNetwork) {
    // The resolver configuration is often a link into /run (systemd-resolved), which is not in the view.
    try {
      const resolver = realpathSync('/etc/resolv.conf');
      if (!SYSTEM_READ_ROOTS.some((root) => within(resolver, root))) view_.push('--ro-bind', resolver, resolver);
    } catch {
      // no resolver configuration
    }
  }
  for (const mask of view.masks()) {
    if (!bound.some((root) => within(mask.path, root))) continue;
    if (view.hiddenBy(mask.path) !== undefined) continue;
    if (mask.kind === 'empty-file') view_.push('--ro-bind', emptyFile(), mask.path);
    else if (mask.kind === 'empty-dir') {
      view_.push('--tmpfs', mask.path);
      remount.push('--remount-ro', mask.path);
    } else if (mask.source !== undefined) view_.push('--ro-bind', mask.source, mask.path);
  }
  return { system, view: view_, remount };
}
