// Writing what a command produces (an answer with `-o`, an export) where the user asked: all of
// it, or nothing and a failure. Free of heavy imports: bin.ts loads the stdout part of it.
import { closeSync, openSync, readlinkSync, rmSync, writeSync } from 'node:fs';

/** Errno codes that mean the disk (not the path the user gave) failed: a failed run, not bad input. */
const DISK_FAULTS = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EFBIG']);

/** Whether `error` is a fault of the disk (full, quota, I/O error, file too large). */
export function isDiskFault(error: unknown): boolean {
  return DISK_FAULTS.has((error as NodeJS.ErrnoException | undefined)?.code ?? '');
}

/** Writes every byte of `data` to `fd` (one `write` may take only part of it: a disk that fills up). */
function writeAll(fd: number, data: Uint8Array): void {
  let written = 0;
  while (written < data.length) written += writeSync(fd, data, written, data.length - written);
}

/**
 * Creates `path` (never overwriting: EEXIST if it exists) and writes all of `content`. When a
 * write fails (the disk fills up), the file it created is removed, so no cut-off file passes for a
 * whole one, and the error is thrown.
 */
export function writeNewFileWhole(path: string, content: string): void {
  const fd = openSync(path, 'wx');
  try {
    writeAll(fd, Buffer.from(content, 'utf8'));
    closeSync(fd);
  } catch (error) {
    try {
      closeSync(fd);
    } catch {
      // Already closed (the close itself failed): the file is removed all the same.
    }
    rmSync(path, { force: true });
    throw error;
  }
}

let stdoutFailure: { error: NodeJS.ErrnoException; path: string | undefined } | undefined;

/**
 * When stdout is a regular file (`rho ... > FILE`), Node writes to it with one `write` per chunk
 * and ignores a short one: on a disk that fills up, the end of the output was silently lost and
 * the next write threw from whatever printed. This makes every chunk written whole or, from the
 * first failure on, none (the command goes on: a run's trace is unaffected); {@link stdoutFault}
 * says what failed, so the exit code and a message can say the output is incomplete.
 */
export function guardFileStdout(stream: NodeJS.WriteStream = process.stdout, fd = 1): void {
  // Node gives a file (not a terminal or a pipe) a SyncWriteStream, whose `_write` is what is
  // replaced below. (Checked by class rather than by an fstat of the descriptor, which on Node 20,
  // rho's floor then, broke the resolution of later imports when stdout was a pipe.)
  if (stream.constructor.name !== 'SyncWriteStream') return;
  const target = stream as unknown as {
    _write: (chunk: Buffer | string, encoding: BufferEncoding, callback: (error?: Error | null) => void) => void;
  };
  target._write = (chunk, encoding, callback) => {
    if (stdoutFailure === undefined) {
      try {
        writeAll(fd, typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk);
      } catch (error) {
        let path: string | undefined;
        try {
          path = readlinkSync(`/proc/self/fd/${fd}`);
        } catch {
          // No /proc: the message says "the standard output" only.
        }
        stdoutFailure = { error: error as NodeJS.ErrnoException, path };
      }
    }
    callback();
  };
}

/** The first write to stdout that failed under {@link guardFileStdout}, if any. */
export function stdoutFault(): { error: NodeJS.ErrnoException; path: string | undefined } | undefined {
  return stdoutFailure;
}
