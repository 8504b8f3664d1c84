import { TRACE_RECORD_TYPES } from './events.js';
import type { TraceRecord } from './events.js';
import { recordShapeProblem } from './internal/record-shape.js';

/**
 * A record as read from a trace: a JSON object with a string `type`. Records of the types rho
 * defines (see {@link isKnownRecord}) have the shapes of {@link TraceRecord} as far as
 * {@link TraceReader} checks them; newer writers may add types, which readers skip.
 */
export type RawTraceRecord = { type: string; ts?: string } & Record<string, unknown>;

/** Why a line of a trace was passed over. */
export type TraceNoteKind = 'not_json' | 'not_a_record' | 'invalid_record' | 'too_large';

/** A line that {@link TraceReader} skipped, and why. */
export interface TraceNote {
  /** `not_json`: not JSON at all; `not_a_record`: JSON, but not an object with a string `type`; `invalid_record`: a record of a known type whose shape consumers cannot use; `too_large`: a line longer than the reader's `maxLineBytes`, passed over unread. */
  kind: TraceNoteKind;
  /** 1-based line number, counted from where the reader started (the file's start unless it was opened at an offset). */
  line: number;
  /** The record's type, for `invalid_record`. */
  type?: string;
  /** What is wrong, for people (`tool_calls[0] is not an object`). */
  reason: string;
  /** The line itself, cut at 200 characters. */
  text: string;
}

/** Where {@link TraceReader} hands what it reads. */
export interface TraceVisitor {
  /** A record of a usable shape, with its line number. */
  record(record: RawTraceRecord, line: number): void;
  /** A line that was skipped (never the torn last line, which {@link TraceReader.end} reports). */
  skipped?(note: TraceNote): void;
}

/** Options of {@link TraceReader} and {@link readTrace}. */
export interface TraceReaderOptions {
  /**
   * Record types the caller has no use for: never passed on. A whole line that starts with one
   * (`{"type": "llm_start"`, as writers put `type` first) is passed over without being parsed,
   * which is what makes replay fast; other lines of these types are parsed and dropped.
   */
  ignoreTypes?: readonly string[];
  /**
   * Byte offset in the file where reading starts (default 0). A byte-order mark is only looked
   * for at offset 0, and {@link TraceReader.position} counts from here.
   */
  offset?: number;
  /**
   * The longest line {@link TraceReader.push} keeps while waiting for its newline, in bytes
   * (default: no limit). A longer line is passed over without being held in memory: its bytes are
   * dropped as they arrive, and once its newline comes it is reported as skipped (`too_large`).
   * Used by followers that must read any trace with bounded memory.
   */
  maxLineBytes?: number;
}

/** What {@link TraceReader.end} found at the end of the input. */
export interface TraceEnd {
  /**
   * True when the last non-blank line was not JSON: a record torn by a crash mid-write. It is
   * not reported as skipped; the next writer starts a new line, so it stays isolated.
   */
  tornLastLine: boolean;
}

/** Everything {@link readTrace} read from a whole trace. */
export interface TraceContents extends TraceEnd {
  /** The usable records, in order. */
  records: RawTraceRecord[];
  /** Line number of each record (same index as `records`). */
  lines: number[];
  /** Lines skipped, in order (the torn last line excluded). */
  skipped: TraceNote[];
}

const NOTE_TEXT_LIMIT = 200;
const NEWLINE = 0x0a;
const CLOSING_BRACE = 0x7d;
const CARRIAGE_RETURN = 0x0d;
const BYTE_ORDER_MARK = 0xfeff;

/**
 * The one reader of `trace.jsonl` (rho's and the Python rho-agent's): it splits lines, parses
 * each as JSON, checks the shape of known records at this boundary (so consumers can trust it),
 * and skips what it cannot use with a {@link TraceNote}. A last line that is not JSON is a record
 * torn by a crash and is reported by {@link end}, not as skipped. Blank lines, `\r\n` line ends
 * and a UTF-8 byte-order mark are accepted.
 *
 * It reads a whole trace ({@link TraceReader.read}, {@link readTrace}) or a growing one
 * incrementally: {@link push} takes the bytes that followed, hands on the records of the whole
 * lines among them, and keeps the unfinished last line until its newline arrives, so a follower
 * never sees half a record. {@link position} is the byte offset just past the last whole line.
 */
export class TraceReader {
  private readonly ignore: RegExp | undefined;
  private readonly ignored: ReadonlySet<string>;
  private startOffset: number;
  private consumed = 0;
  private lineCount = 0;
  private pending: Uint8Array[] = [];
  private atStart: boolean;
  // A line that was not JSON: torn if nothing but blank lines follows it, skipped otherwise.
  private suspect: TraceNote | undefined;
  private torn = false;
  private readonly maxLineBytes: number;
  /** Bytes of the unfinished last line (kept in `pending`, or dropped when it is too long). */
  private pendingBytes = 0;
  /** The unfinished last line is over `maxLineBytes`: its bytes are counted, not kept. */
  private oversized = false;
  /** The start of an oversized line, for its note. */
  private oversizedStart = '';

  constructor(options: TraceReaderOptions = {}) {
    this.startOffset = options.offset ?? 0;
    this.maxLineBytes = options.maxLineBytes ?? Number.POSITIVE_INFINITY;
    this.atStart = this.startOffset === 0;
    const types = options.ignoreTypes ?? [];
    this.ignored = new Set(types);
    // A sticky match at the line's start, no copy of the line.
    this.ignore =
      types.length === 0
        ? undefined
        : new RegExp(`\\{\\s*"type"\\s*:\\s*"(?:${types.map(escapeRegExp).join('|')})"`, 'y');
  }

  /** Reads a whole trace (bytes, decoded as UTF-8, or text) through `visitor`. */
  static read(source: string | Uint8Array, visitor: TraceVisitor, options: TraceReaderOptions = {}): TraceEnd {
    const reader = new TraceReader(options);
    const text = typeof source === 'string' ? source : decode(source);
    reader.scan(text, visitor);
    return reader.finish();
  }

  /** Byte offset in the file just past the last whole line read: where reading would resume. */
  get position(): number {
    return this.startOffset + this.consumed;
  }

  /** Number of lines read so far (blank lines included). */
  get lines(): number {
    return this.lineCount;
  }

  /**
   * Reads the bytes that follow what was pushed before: visits the records of every line that
   * is now whole, and keeps an unfinished last line for the next push. A newline byte never
   * occurs inside a UTF-8 sequence, so whole lines are decoded at once. The reader may keep
   * `chunk` (not a copy) until its last line is whole: do not reuse its memory for the next read.
   */
  push(chunk: Uint8Array, visitor: TraceVisitor): void {
    const lastNewline = chunk.lastIndexOf(NEWLINE);
    if (lastNewline === -1) {
      if (chunk.length > 0) this.keepPending(chunk);
      return;
    }
    let start = 0;
    if (this.pending.length > 0 || this.oversized) {
      // Only the line that was pending is joined (a copy of the whole chunk would cost more
      // than reading it); the rest of the chunk is decoded where it is.
      start = chunk.indexOf(NEWLINE) + 1;
      if (this.oversized) {
        this.consumed += this.pendingBytes + start;
        this.skipOversized(this.pendingBytes + start, visitor);
      } else {
        const line = Buffer.concat([...this.pending, chunk.subarray(0, start)]);
        this.pending = [];
        this.pendingBytes = 0;
        this.consumed += line.length;
        this.scan(decode(line), visitor);
      }
    }
    if (start <= lastNewline) {
      this.consumed += lastNewline + 1 - start;
      if (Number.isFinite(this.maxLineBytes)) this.scanBounded(chunk.subarray(start, lastNewline + 1), visitor);
      else this.scan(decode(chunk.subarray(start, lastNewline + 1)), visitor);
    }
    if (lastNewline + 1 < chunk.length) this.keepPending(chunk.subarray(lastNewline + 1));
  }

  /** Keeps (or, past `maxLineBytes`, only counts) bytes of the unfinished last line. */
  private keepPending(bytes: Uint8Array): void {
    this.pendingBytes += bytes.length;
    if (this.oversized) return;
    if (this.pendingBytes > this.maxLineBytes) {
      this.oversized = true;
      const first = this.pending[0] ?? bytes;
      this.oversizedStart = decode(first.subarray(0, NOTE_TEXT_LIMIT));
      this.pending = [];
      return;
    }
    this.pending.push(bytes);
  }

  /** Reports the oversized line that just ended (`bytes` long) and forgets it. */
  private skipOversized(bytes: number, visitor: TraceVisitor): void {
    this.lineCount += 1;
    this.oversized = false;
    this.pendingBytes = 0;
    if (this.suspect !== undefined) this.flushSuspect(visitor);
    visitor.skipped?.({
      kind: 'too_large',
      line: this.lineCount,
      reason: `the line is ${bytes} bytes, over the reader's limit of ${this.maxLineBytes}: it was not read`,
      text: `${this.oversizedStart}...`,
    });
    this.oversizedStart = '';
  }

  /** Whole lines, each over `maxLineBytes` passed over unread, the others scanned as usual. */
  private scanBounded(bytes: Uint8Array, visitor: TraceVisitor): void {
    let from = 0;
    let lineStart = 0;
    while (lineStart < bytes.length) {
      const newline = bytes.indexOf(NEWLINE, lineStart);
      const lineEnd = newline === -1 ? bytes.length : newline + 1;
      if (lineEnd - lineStart > this.maxLineBytes) {
        if (from < lineStart) this.scan(decode(bytes.subarray(from, lineStart)), visitor);
        this.oversizedStart = decode(bytes.subarray(lineStart, lineStart + NOTE_TEXT_LIMIT));
        this.skipOversized(lineEnd - lineStart, visitor);
        from = lineEnd;
      }
      lineStart = lineEnd;
    }
    if (from < bytes.length) this.scan(decode(bytes.subarray(from)), visitor);
  }

  /**
   * The input ended (a whole file was read, or a follower stops): reads an unfinished last line
   * (a record without its newline is still a record; anything else there is torn) and says
   * whether the trace ends in a torn line.
   */
  end(visitor: TraceVisitor): TraceEnd {
    if (this.oversized) {
      this.consumed += this.pendingBytes;
      this.skipOversized(this.pendingBytes, visitor);
    }
    if (this.pending.length > 0) {
      const bytes = Buffer.concat(this.pending);
      this.pending = [];
      this.pendingBytes = 0;
      this.consumed += bytes.length;
      this.scan(decode(bytes), visitor);
    }
    return this.finish();
  }

  /** Forgets everything read, to read a file again from `offset` (it was truncated or replaced). */
  reset(offset = 0): void {
    this.startOffset = offset;
    this.consumed = 0;
    this.lineCount = 0;
    this.pending = [];
    this.pendingBytes = 0;
    this.oversized = false;
    this.oversizedStart = '';
    this.atStart = offset === 0;
    this.suspect = undefined;
    this.torn = false;
  }

  private finish(): TraceEnd {
    if (this.suspect !== undefined) {
      this.suspect = undefined;
      this.torn = true;
    }
    return { tornLastLine: this.torn };
  }

  private scan(text: string, visitor: TraceVisitor): void {
    let start = 0;
    if (this.atStart) {
      this.atStart = false;
      if (text.charCodeAt(0) === BYTE_ORDER_MARK) start = 1;
    }
    const ignore = this.ignore;
    const length = text.length;
    while (start < length) {
      let end = text.indexOf('\n', start);
      const terminated = end !== -1;
      if (!terminated) end = length;
      this.lineCount += 1;
      const lineStart = start;
      start = end + 1;
      if (end === lineStart) continue;
      if (ignore !== undefined) {
        ignore.lastIndex = lineStart;
        // Only a line that ends like a whole record: a torn one must still be found torn.
        if (
          ignore.test(text) &&
          (text.charCodeAt(end - 1) === CLOSING_BRACE ||
            (text.charCodeAt(end - 1) === CARRIAGE_RETURN && text.charCodeAt(end - 2) === CLOSING_BRACE))
        ) {
          if (this.suspect !== undefined) this.flushSuspect(visitor);
          continue;
        }
      }
      let value: unknown;
      try {
        value = JSON.parse(text.slice(lineStart, end));
      } catch {
        const line = text.slice(lineStart, end);
        if (line.trim() === '') continue;
        if (this.suspect !== undefined) this.flushSuspect(visitor);
        const note: TraceNote = {
          kind: 'not_json',
          line: this.lineCount,
          reason: 'the line is not JSON',
          text: shorten(line),
        };
        // An unterminated last line that is not JSON is torn; a whole one is torn only if
        // nothing but blank lines follows it, which only the next line (or the end) tells.
        if (terminated) this.suspect = note;
        else this.torn = true;
        continue;
      }
      if (this.suspect !== undefined) this.flushSuspect(visitor);
      if (
        typeof value !== 'object' ||
        value === null ||
        Array.isArray(value) ||
        typeof (value as { type?: unknown }).type !== 'string'
      ) {
        visitor.skipped?.({
          kind: 'not_a_record',
          line: this.lineCount,
          reason: 'the line is not a JSON object with a string "type"',
          text: shorten(text.slice(lineStart, end)),
        });
        continue;
      }
      const record = value as RawTraceRecord;
      // An ignored type written differently (`{ "ts": ..., "type": ...}`) is still ignored.
      if (this.ignored.size > 0 && this.ignored.has(record.type)) continue;
      const problem = recordShapeProblem(record);
      if (problem !== undefined) {
        visitor.skipped?.({
          kind: 'invalid_record',
          line: this.lineCount,
          type: record.type,
          reason: problem,
          text: shorten(text.slice(lineStart, end)),
        });
        continue;
      }
      visitor.record(record, this.lineCount);
    }
  }

  private flushSuspect(visitor: TraceVisitor): void {
    const note = this.suspect!;
    this.suspect = undefined;
    visitor.skipped?.(note);
  }
}

/**
 * Reads a whole trace (the bytes of `trace.jsonl`, or its text) into its usable records, the
 * lines it skipped and whether its last line was torn. See {@link TraceReader} for the rules.
 */
export function readTrace(source: string | Uint8Array, options: TraceReaderOptions = {}): TraceContents {
  const records: RawTraceRecord[] = [];
  const lines: number[] = [];
  const skipped: TraceNote[] = [];
  const { tornLastLine } = TraceReader.read(
    source,
    {
      record(record, line) {
        records.push(record);
        lines.push(line);
      },
      skipped(note) {
        skipped.push(note);
      },
    },
    options,
  );
  return { records, lines, skipped, tornLastLine };
}

/** Whether a record has one of the types rho's trace format defines. */
export function isKnownRecord(record: RawTraceRecord): record is RawTraceRecord & TraceRecord {
  return TRACE_RECORD_TYPES.has(record.type);
}

function decode(bytes: Uint8Array): string {
  return (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).toString(
    'utf8',
  );
}

function shorten(line: string): string {
  return line.length > NOTE_TEXT_LIMIT ? `${line.slice(0, NOTE_TEXT_LIMIT)}...` : line;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
