import { closeSync, fstatSync, ftruncateSync, openSync, readSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import { SessionWriteError } from './errors.js';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
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
  private spilled = 0;
  private readonly maxRecordBytes: number;

  constructor(
    readonly path: string,
    options: {
      /** The largest line written, in bytes (default {@link MAX_TRACE_RECORD_BYTES}). */
      maxRecordBytes?: number;
    } = {},
  ) {
    this.maxRecordBytes = Math.max(4096, options.maxRecordBytes ?? MAX_TRACE_RECORD_BYTES);
  }

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
    let bytes: Buffer = Buffer.from(`${JSON.stringify(record)}\n`);
    if (bytes.length > this.maxRecordBytes) bytes = this.bounded(record, bytes);
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

  /**
   * A record over the limit: the whole of it goes to a side file (`spill/N-TYPE.json` beside the
   * trace, written whole then renamed into place), and the trace gets a copy whose long texts are
   * cut, each with a note naming the side file, plus `spilled: {file, bytes}`. Readers (watch,
   * export, resume, the dashboard, the fleet) then never meet a record larger than the limit.
   */
  private bounded(record: TraceRecord, bytes: Buffer): Buffer {
    const directory = join(dirname(this.path), 'spill');
    this.spilled += 1;
    const name = `${Date.now()}-${this.spilled}-${String(record.type).replace(/[^a-z_]/g, '')}.json`;
    const file = `spill/${name}`;
    try {
      mkdirSync(directory, { recursive: true });
      const temporary = join(directory, `.${name}.tmp`);
      writeFileSync(temporary, bytes.subarray(0, bytes.length - 1));
      renameSync(temporary, join(directory, name));
    } catch (error) {
      throw SessionWriteError.from(join(directory, name), error, HINT);
    }
    for (const keep of [64 * 1024, 4 * 1024, 256]) {
      const cut = cutStrings(record, keep, file);
      const line = Buffer.from(`${JSON.stringify({ ...cut, spilled: { file, bytes: bytes.length - 1 } })}\n`);
      if (line.length <= this.maxRecordBytes) return line;
    }
    // Thousands of fields: only what says what the record was.
    const outline = {
      type: record.type,
      ts: (record as { ts?: unknown }).ts,
      spilled: { file, bytes: bytes.length - 1 },
    };
    return Buffer.from(`${JSON.stringify(outline)}\n`);
  }
}

/**
 * The largest trace record written whole, in bytes of its JSON line: 8 MiB. A longer one (an
 * answer or tool output that some bound upstream did not stop) is written cut, with its whole
 * text in a side file (see {@link JsonlTraceSink}).
 */
export const MAX_TRACE_RECORD_BYTES = 8 * 1024 * 1024;

/** A copy of `value` with every string longer than `keep` cut to `keep`, with a note naming `file`. */
function cutStrings(value: unknown, keep: number, file: string): Record<string, unknown> {
  const cut = (item: unknown): unknown => {
    if (typeof item === 'string')
      return item.length > keep
        ? `${item.slice(0, keep)}\n[... ${item.length - keep} more characters: the whole record is in ${file} beside the trace]`
        : item;
    if (Array.isArray(item)) return item.map(cut);
    if (typeof item === 'object' && item !== null)
      return Object.fromEntries(Object.entries(item).map(([key, inner]) => [key, cut(inner)]));
    return item;
  };
  return cut(value) as Record<string, unknown>;
}

const HINT = 'The run stopped because its trace cannot be written; fix that, then continue with rho --resume.';
