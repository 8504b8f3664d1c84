import { readdirSync, realpathSync, lstatSync, statSync } from 'node:fs';
import { lstat, readdir, realpath, stat } from 'node:fs/promises';

/** What is at a path. */
export type EntryKind = 'file' | 'directory' | 'symlink' | 'other';

/**
 * The file system a decision looks at: this machine's ({@link LOCAL_FILES}), or the one of the
 * backend the tools run on (a remote sandbox has its own: its working directory does not exist on
 * this machine). The write decision (`checkWritePath`) and the restricted shell's `< FILE` and file
 * name patterns (`checkShellCommand`) ask it, never the local disk directly, so each backend is
 * judged on what it would really touch.
 */
export interface FileLookup {
  /** The canonical absolute path, every link and `..` resolved; rejects when it does not exist. */
  realpath(path: string): Promise<string>;
  /** What is at `path`, through a final link when `follow`; undefined when nothing is there. */
  kind(path: string, follow: boolean): Promise<EntryKind | undefined>;
  /** The names in a directory (not `.` or `..`); rejects when it is not one. */
  readdir(path: string): Promise<string[]>;
}

function kindOf(info: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): EntryKind {
  return info.isSymbolicLink() ? 'symlink' : info.isDirectory() ? 'directory' : info.isFile() ? 'file' : 'other';
}

/** This machine's file system. */
export const LOCAL_FILES: FileLookup = {
  realpath: (path) => realpath(path),
  kind: async (path, follow) => {
    try {
      return kindOf(await (follow ? stat(path) : lstat(path)));
    } catch {
      return undefined;
    }
  },
  readdir: (path) => readdir(path),
};

/** A {@link FileLookup} asked synchronously, as the shell check's parse walk does. */
export interface SyncFileView {
  realpath(path: string): string;
  kind(path: string, follow: boolean): EntryKind | undefined;
  readdir(path: string): string[];
}

/** This machine's file system, synchronously. */
export const LOCAL_SYNC_FILES: SyncFileView = {
  realpath: (path) => realpathSync(path),
  kind: (path, follow) => {
    try {
      return kindOf(follow ? statSync(path) : lstatSync(path));
    } catch {
      return undefined;
    }
  },
  readdir: (path) => readdirSync(path),
};

/** Thrown by a {@link CachedFiles} view for what it has not looked up yet. */
export class LookupNeeded extends Error {
  constructor(
    readonly operation: 'realpath' | 'kind' | 'readdir',
    readonly path: string,
    readonly follow = false,
  ) {
    super(`${operation} ${path}`);
  }
}

type Cached<T> = { value: T } | { error: Error };

/**
 * A synchronous view over an asynchronous {@link FileLookup}: it answers from what was looked up
 * and throws {@link LookupNeeded} for anything else; {@link CachedFiles.lookUp} then fetches it,
 * and the caller runs its synchronous check again. A directory's listing brings what each entry is
 * (through links), so a pattern is expanded in one round per directory level.
 */
export class CachedFiles implements SyncFileView {
  private readonly paths = new Map<string, Cached<string>>();
  private readonly kinds = new Map<string, EntryKind | undefined>();
  private readonly listings = new Map<string, Cached<string[]>>();

  constructor(private readonly lookup: FileLookup) {}

  realpath(path: string): string {
    const cached = this.paths.get(path);
    if (cached === undefined) throw new LookupNeeded('realpath', path);
    if ('error' in cached) throw cached.error;
    return cached.value;
  }

  kind(path: string, follow: boolean): EntryKind | undefined {
    const key = `${follow ? 'stat' : 'lstat'}:${path}`;
    if (!this.kinds.has(key)) throw new LookupNeeded('kind', path, follow);
    return this.kinds.get(key);
  }

  readdir(path: string): string[] {
    const cached = this.listings.get(path);
    if (cached === undefined) throw new LookupNeeded('readdir', path);
    if ('error' in cached) throw cached.error;
    return cached.value;
  }

  /** Fetches what `needed` asks for. */
  async lookUp(needed: LookupNeeded): Promise<void> {
    const { lookup } = this;
    const attempt = async <T>(work: () => Promise<T>): Promise<Cached<T>> => {
      try {
        return { value: await work() };
      } catch (error) {
        return { error: error instanceof Error ? error : new Error(String(error)) };
      }
    };
    if (needed.operation === 'realpath') this.paths.set(needed.path, await attempt(() => lookup.realpath(needed.path)));
    else if (needed.operation === 'kind')
      this.kinds.set(
        `${needed.follow ? 'stat' : 'lstat'}:${needed.path}`,
        await lookup.kind(needed.path, needed.follow),
      );
    else {
      const listing = await attempt(() => lookup.readdir(needed.path));
      this.listings.set(needed.path, listing);
      if ('value' in listing) {
        const base = needed.path.endsWith('/') ? needed.path : `${needed.path}/`;
        const kinds = await Promise.all(listing.value.map((name) => lookup.kind(`${base}${name}`, true)));
        listing.value.forEach((name, index) => this.kinds.set(`stat:${base}${name}`, kinds[index]));
      }
    }
  }
}
