import type { FileHandle } from 'node:fs/promises';
import { cellText } from './cell-text.js';

// Fields holding a delimiter, a quote or a line break are quoted, quotes doubled (RFC 4180 §2.6-7).
function csvField(value: unknown, delimiter: ',' | '\t'): string {
  const text = cellText(value);
  if (text === null) return '';
  return /["\r\n]/.test(text) || text.includes(delimiter) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV record with the CRLF line ending RFC 4180 prescribes (tab-separated with `'\t'`, quoted the same way). */
export function csvRecord(values: readonly unknown[], delimiter: ',' | '\t' = ','): string {
  return `${values.map((value) => csvField(value, delimiter)).join(delimiter)}\r\n`;
}

/**
 * Writes CSV records to an open file, buffering at most about `highWaterMark` bytes before it
 * writes; awaiting `write` is the backpressure the drivers wait on.
 */
export class CsvWriter {
  private chunks: string[] = [];
  private pending = 0;
  /** Bytes written so far. */
  bytes = 0;

  constructor(
    private readonly file: FileHandle,
    private readonly highWaterMark = 1 << 20,
    private readonly delimiter: ',' | '\t' = ',',
  ) {}

  /** Appends records; resolves once the buffer is below the high-water mark again. */
  async write(records: readonly (readonly unknown[])[]): Promise<void> {
    for (const record of records) {
      const line = csvRecord(record, this.delimiter);
      this.chunks.push(line);
      this.pending += line.length;
    }
    if (this.pending >= this.highWaterMark) await this.flush();
  }

  /** Writes everything buffered. */
  async flush(): Promise<void> {
    if (this.chunks.length === 0) return;
    const data = Buffer.from(this.chunks.join(''), 'utf8');
    this.chunks = [];
    this.pending = 0;
    await this.file.writeFile(data);
    this.bytes += data.length;
  }
}
