import { watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { TraceError, TraceReader } from '@rho/core';
import type { RawTraceRecord, TraceNote, TraceVisitor } from '@rho/core';

/** The longest trace line {@link followTrace} reads whole by default: 64 MiB. */
export const FOLLOW_MAX_LINE_BYTES = 64 * 1024 * 1024;

/** Options of {@link followTrace}. */
export interface FollowTraceOptions {
  /** Start at the beginning of the file (default) or at its current end, like `tail -f -n 0`. */
  fromStart?: boolean;
  /** Ends the iteration (without an error) when aborted. */
  signal?: AbortSignal;
  /** How often to look for new data when no file-system event arrives (default 200 ms). */
  pollIntervalMs?: number;
  /**
   * Called whenever everything written so far has been read; return true to end the iteration.
   * This is how a watcher stops at the end of a run without missing records written just before.
   */
  onIdle?: () => boolean | Promise<boolean>;
  /**
   * Called after the records of each chunk read (at most 4 MiB of the file) have been yielded,
   * before the next read: a consumer that gathers records into batches bounds each batch by it.
   */
  onChunk?: () => void;
  /**
   * The longest line read whole, in bytes (default {@link FOLLOW_MAX_LINE_BYTES}). A longer line
   * (a record written before traces had a size limit) is not held in memory: it is skipped and
   * reported through `onSkippedLine` (kind `too_large`).
   */
  maxLineBytes?: number;
  /**
   * Called for each line core's trace reader skips (not JSON, not a record, or a record of the
   * wrong shape), with the reason. A line that is not JSON is reported once a later line shows
   * it was not the unfinished end of the trace.
   */
  onSkippedLine?: (note: TraceNote) => void;
}

/**
 * Follows a `trace.jsonl` like `tail -f`: yields each record once a whole line has been written
 * (decoded and checked by core's {@link TraceReader}, which keeps a partial last line until its
 * newline arrives), waits for the file when it does not exist yet, and starts over when the
 * file is truncated or replaced. Wakes on `fs.watch` events of the
 * directory when the platform delivers them, and polls in any case, so it works on file systems
 * that do not (network mounts, containers).
 *
 * Only a missing file is waited for: a trace that exists but cannot be read (a directory, a FIFO,
 * a symbolic-link loop, no permission) ends the iteration with a {@link TraceError} naming the
 * file and the errno. Work is linear in the size of the trace: it reads in chunks of up to
 * 4 MiB, keeps only the unfinished last line between chunks, and registers one abort listener
 * for the whole follow.
 */
export async function* followTrace(
  path: string,
  options: FollowTraceOptions = {},
): AsyncGenerator<RawTraceRecord, void, undefined> {
  const { signal } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 200;
  let position = options.fromStart === false ? ((await readSize(path)) ?? 0) : 0;
  // The reader keeps the unfinished last line, as the chunks it came in (joined once its newline
  // arrives, so a line longer than many chunks is copied once, not once per chunk).
  const reader = new TraceReader({ offset: position, maxLineBytes: options.maxLineBytes ?? FOLLOW_MAX_LINE_BYTES });
  // The records of the latest chunk; one array for the whole follow, emptied once yielded.
  const batch: RawTraceRecord[] = [];
  const visitor: TraceVisitor = {
    record: (record) => {
      batch.push(record);
    },
    ...(options.onSkippedLine === undefined ? {} : { skipped: options.onSkippedLine }),
  };
  let identity: string | undefined;
  const waker = createWaker(path, signal);
  try {
    while (signal?.aborted !== true) {
      const chunk = await readFrom(path, position);
      if (chunk !== undefined) {
        if (identity !== undefined && (chunk.identity !== identity || chunk.size < position)) {
          // Replaced or truncated: what was pending belonged to the old content.
          position = 0;
          reader.reset(0);
          identity = chunk.identity;
          continue;
        }
        identity = chunk.identity;
      }
      if (chunk !== undefined && chunk.data.length > 0) {
        position += chunk.data.length;
        reader.push(chunk.data, visitor);
        for (let index = 0; index < batch.length; index += 1) {
          yield batch[index]!;
          // The consumer may have aborted while it held the record.
          if (isAborted(signal)) return;
        }
        batch.length = 0;
        options.onChunk?.();
        continue;
      }
      if (options.onIdle !== undefined && (await options.onIdle())) {
        // What was written between the last read and the decision (a run's last records land
        // just before its final status) is read before the follow ends.
        const size = await readSize(path);
        if (size === undefined || size === position) return;
        continue;
      }
      await waker.wait(pollIntervalMs);
    }
  } finally {
    waker.close();
  }
}

function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

async function readSize(path: string): Promise<number | undefined> {
  try {
    const handle = await open(path, 'r');
    try {
      return (await handle.stat()).size;
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
}

/** Everything after `position`, with the file's size and identity (device and inode). */
async function readFrom(
  path: string,
  position: number,
): Promise<{ data: Buffer; size: number; identity: string } | undefined> {
  // stat before open: opening a FIFO for reading would block until a writer appears.
  let info;
  try {
    info = await stat(path);
  } catch (error) {
    // Not there (yet): the run may not have started; a dangling symbolic link is the same.
    if (errnoOf(error) === 'ENOENT') return undefined;
    throw unreadable(path, error);
  }
  if (!info.isFile()) {
    throw new TraceError({
      message: `Cannot read the trace ${path}: it is ${info.isDirectory() ? 'a directory' : 'not a regular file'}, not a file of trace records.`,
    });
  }
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    // Removed between stat and open: wait for its replacement.
    if (errnoOf(error) === 'ENOENT') return undefined;
    throw unreadable(path, error);
  }
  try {
    const opened = await handle.stat();
    const identity = `${opened.dev}:${opened.ino}`;
    if (!opened.isFile()) throw new TraceError({ message: `Cannot read the trace ${path}: it is not a regular file.` });
    if (opened.size <= position) return { data: Buffer.alloc(0), size: opened.size, identity };
    const data = Buffer.alloc(Math.min(opened.size - position, 4 * 1024 * 1024));
    let read = 0;
    while (read < data.length) {
      const { bytesRead } = await handle.read(data, read, data.length - read, position + read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    return { data: data.subarray(0, read), size: opened.size, identity };
  } catch (error) {
    throw TraceError.isInstance(error) ? error : unreadable(path, error);
  } finally {
    await handle.close();
  }
}

function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

const ERRNO_WORDS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ELOOP: 'too many levels of symbolic links',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'it is a directory',
  EIO: 'an input/output error',
  EMFILE: 'too many open files',
};

function unreadable(path: string, error: unknown): TraceError {
  const code = errnoOf(error);
  const words =
    code === undefined
      ? error instanceof Error
        ? error.message
        : String(error)
      : `${ERRNO_WORDS[code] ?? 'it cannot be read'} (${code})`;
  return new TraceError({ message: `Cannot read the trace ${path}: ${words}.`, cause: error });
}

/**
 * Sleeps until the poll interval passes, the watched file changes, or the signal aborts. One
 * abort listener serves every wait of a follow, and `close` removes it (a listener added per wait
 * and not removed was what made `rho watch` quadratic, in its merge of child sessions).
 */
function createWaker(
  path: string,
  signal: AbortSignal | undefined,
): { wait: (ms: number) => Promise<void>; close: () => void } {
  let wake: (() => void) | undefined;
  let changed = false;
  let watcher: FSWatcher | undefined;
  try {
    // The directory, not the file: the file may not exist yet, and a replaced file keeps no watch.
    watcher = watch(dirname(path), { persistent: false }, (_event, name) => {
      if (name !== null && name !== basename(path)) return;
      changed = true;
      wake?.();
    });
    watcher.on('error', () => {
      watcher?.close();
      watcher = undefined;
    });
  } catch {
    // No fs.watch here (or no such directory yet): polling alone still finds every change.
    watcher = undefined;
  }
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort, { once: true });
  return {
    wait(ms) {
      if (changed || signal?.aborted === true) {
        changed = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const timer = setTimeout(() => wake?.(), ms);
        wake = () => {
          clearTimeout(timer);
          wake = undefined;
          changed = false;
          resolve();
        };
      });
    },
    close() {
      signal?.removeEventListener('abort', onAbort);
      watcher?.close();
      wake?.();
    },
  };
}
