import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { TraceReader } from '@rho/core';
import type { RawTraceRecord } from '@rho/core';

/** The longest line read, as the follower reads them (64 MiB; a longer one is passed over). */
const MAX_LINE_BYTES = 64 * 1024 * 1024;
const CHUNK_BYTES = 4 * 1024 * 1024;
const NEWLINE = 0x0a;

/**
 * Where each record of a trace file starts: the line of every record as core's `TraceReader`
 * hands records on (the same numbering as the follower's, skipped lines and all), and where every
 * line starts, so the detail pane's records are read from the file by index (a few reads) rather
 * than kept in memory or found by reading the trace again. About 16 bytes per record; brought up
 * to date from where it stopped when the file grew, read again when it was replaced or cut.
 */
export class RecordOffsets {
  /** Byte offset of line k + 1 (1-based lines, as the reader counts them) at index k. */
  private lineStarts: number[] = [0];
  /** The line of record i. */
  private recordLines: number[] = [];
  private position = 0;
  private identity: string | undefined;
  private reader = new TraceReader({ maxLineBytes: MAX_LINE_BYTES });
  /** Reads one at a time: each brings the offsets up to date first. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly path: string) {}

  /** The records at `indexes` that the file has, as the trace holds them now. */
  read(indexes: readonly number[]): Promise<Map<number, RawTraceRecord>> {
    const run = this.queue.then(() => this.readNow(indexes));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async readNow(indexes: readonly number[]): Promise<Map<number, RawTraceRecord>> {
    const file = await open(this.path, 'r');
    const found = new Map<number, RawTraceRecord>();
    try {
      await this.update(file);
      for (const index of indexes) {
        const line = this.recordLines[index];
        if (line === undefined) continue;
        const start = this.lineStarts[line - 1]!;
        const end = this.lineStarts[line] ?? this.position;
        const buffer = Buffer.alloc(end - start);
        await file.read(buffer, 0, buffer.length, start);
        try {
          found.set(index, JSON.parse(buffer.toString('utf8').replace(/^\uFEFF/, '')) as RawTraceRecord);
        } catch {
          // The reader took it as a record: only a file changed under us gets here; left out.
        }
      }
    } finally {
      await file.close();
    }
    return found;
  }

  private async update(file: FileHandle): Promise<void> {
    const stat = await file.stat();
    const identity = `${stat.dev}:${stat.ino}`;
    if ((this.identity !== undefined && identity !== this.identity) || stat.size < this.position) this.reset();
    this.identity = identity;
    const visitor = {
      record: (_record: RawTraceRecord, line: number) => {
        this.recordLines.push(line);
      },
    };
    while (this.position < stat.size) {
      const buffer = Buffer.alloc(Math.min(CHUNK_BYTES, stat.size - this.position));
      const { bytesRead } = await file.read(buffer, 0, buffer.length, this.position);
      if (bytesRead === 0) break;
      const chunk = buffer.subarray(0, bytesRead);
      for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, at + 1))
        this.lineStarts.push(this.position + at + 1);
      this.position += bytesRead;
      this.reader.push(chunk, visitor);
    }
  }

  private reset(): void {
    this.lineStarts = [0];
    this.recordLines = [];
    this.position = 0;
    this.reader = new TraceReader({ maxLineBytes: MAX_LINE_BYTES });
  }
}

/** The offsets of the traces asked about lately (at most `max`, the least recent let go first). */
export class RecordOffsetsCache {
  private readonly entries = new Map<string, RecordOffsets>();

  constructor(private readonly max = 16) {}

  of(path: string): RecordOffsets {
    let entry = this.entries.get(path);
    if (entry === undefined) entry = new RecordOffsets(path);
    this.entries.delete(path);
    this.entries.set(path, entry);
    if (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value!);
    return entry;
  }
}
