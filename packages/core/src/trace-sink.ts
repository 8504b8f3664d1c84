import { closeSync, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import { SessionWriteError } from './errors.js';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { TraceRecord } from './events.js';

/**
 * Where trace records go. The default writes `trace.jsonl` in the session directory; a database
 * implementation for fleets can take its place without touching the loop.
 */
export interface TraceSink {
  /** Persists one record. Must not return before the record survives a crash of this process. */
  append(record: TraceRecord): void;
  /** Releases resources. */
  close(): void;
}

/**
 * Appends records to a JSONL file, one `write(2)` per record on a file opened for appending, so
 * a record is either wholly in the file or not at all once `append` returns, even if the process
 * is killed the next instant (the kernel owns the data then; only a power loss can lose it).
 * If the file ends in a torn line left by an earlier crash, a newline is written first so the
 * torn line stays isolated and every new record is readable.
 */
export class JsonlTraceSink implements TraceSink {
  private fd: number | undefined;

  constructor(readonly path: string) {}

  private open(): number {
    if (this.fd !== undefined) return this.fd;
    let fd: number | undefined;
    try {
      mkdirSync(dirname(this.path), { recursive: true });
      fd = openSync(this.path, 'a+');
      const size = fstatSync(fd).size;
      if (size > 0) {
        const last = Buffer.alloc(1);
        readSync(fd, last, 0, 1, size - 1);
        if (last[0] !== 0x0a) writeSync(fd, '\n');
      }
    } catch (error) {
      if (fd !== undefined) closeSync(fd);
      throw SessionWriteError.from(this.path, error, HINT);
    }
    this.fd = fd;
    return fd;
  }

  /**
   * Writes the record whole or not at all: a short write (a disk filling up) is completed, and
   * when that fails the part already written is cut off again, so no torn record is left behind.
   * Throws a {@link SessionWriteError} naming the file and the errno.
   */
  append(record: TraceRecord): void {
    const fd = this.open();
    const bytes = Buffer.from(`${JSON.stringify(record)}\n`);
    let written = 0;
    try {
      while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
    } catch (error) {
      if (written > 0) {
        try {
          ftruncateSync(fd, fstatSync(fd).size - written);
        } catch {
          // Replay ignores a torn last line anyway.
        }
      }
      throw SessionWriteError.from(this.path, error, HINT);
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

const HINT = 'The run stopped because its trace cannot be written; fix that, then continue with rho --resume.';
