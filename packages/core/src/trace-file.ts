import { closeSync, openSync, readSync } from 'node:fs';
import { TraceReader } from './trace-reader.js';
import type { RawTraceRecord, TraceContents, TraceNote, TraceReaderOptions } from './trace-reader.js';

/** The longest line {@link readTraceFile} reads whole by default: 64 MiB (the sink writes none above 8). */
export const READ_MAX_LINE_BYTES = 64 * 1024 * 1024;

const CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * Reads a trace file in chunks through {@link TraceReader}, never holding more of it than its
 * records and one line: a line longer than `maxLineBytes` (default {@link READ_MAX_LINE_BYTES};
 * a record written before traces had a size limit) is passed over unread and reported as skipped
 * (`too_large`). Throws what `openSync`/`readSync` throw.
 */
export function readTraceFile(path: string, options: TraceReaderOptions = {}): TraceContents {
  const records: RawTraceRecord[] = [];
  const lines: number[] = [];
  const skipped: TraceNote[] = [];
  const visitor = {
    record(record: RawTraceRecord, line: number) {
      records.push(record);
      lines.push(line);
    },
    skipped(note: TraceNote) {
      skipped.push(note);
    },
  };
  const reader = new TraceReader({ maxLineBytes: READ_MAX_LINE_BYTES, ...options });
  const fd = openSync(path, 'r');
  try {
    for (;;) {
      // A new buffer each time: the reader may keep a chunk until its last line is whole.
      const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
      const read = readSync(fd, chunk, 0, CHUNK_BYTES, null);
      if (read === 0) break;
      reader.push(chunk.subarray(0, read), visitor);
    }
  } finally {
    closeSync(fd);
  }
  const { tornLastLine } = reader.end(visitor);
  return { records, lines, skipped, tornLastLine };
}
