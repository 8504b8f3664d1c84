import { extname } from 'node:path';
import { defineTool, type ExecutionBackend, type ReadHandle } from '@rho/core';
import { backendOf, errorCode, errorMessage, resolvePath } from './internal/paths.js';
import { failure } from './internal/result.js';
import { capLine } from './internal/cap-line.js';
import { readPathRefusal, viewOf, type ReadViewSource } from './internal/read-path.js';

/** Lines shown when `end_line` is not given. */
export const READ_DEFAULT_LINES = 500;
/** Characters kept of each line. */
export const READ_MAX_LINE_CHARS = 500;
/** Most lines one call returns, whatever range was asked for (memory stays bounded). */
export const READ_MAX_LINES = 2000;
/** Most lines `start_line: -N` (counting from the end) returns. */
const MAX_TAIL_LINES = READ_MAX_LINES;
/** Bytes kept of one line: enough for 500 characters of up to four UTF-8 bytes, plus one. */
const MAX_LINE_BYTES = READ_MAX_LINE_CHARS * 4 + 4;
const CHUNK_BYTES = 1024 * 1024;
/** Bytes inspected (the file's first) to tell binary files from text. */
const SNIFF_BYTES = 8192;
/**
 * A file whose first {@link SNIFF_BYTES} bytes decode to more than this share of U+FFFD
 * (replacement characters: bytes that are not valid UTF-8) is taken for binary. Random bytes give
 * about half; a Latin-1 or Windows-1252 text read as UTF-8 gives a few percent and stays readable.
 */
export const READ_MAX_INVALID_UTF8_SHARE = 0.3;

/** Extensions refused without reading (case-insensitive), as in the original. */
export const BINARY_EXTENSIONS: ReadonlySet<string> = new Set(
  (
    '.png .jpg .jpeg .gif .bmp .ico .webp .svg .tiff .tif .mp3 .mp4 .wav .avi .mov .mkv .flac .ogg .webm ' +
    '.zip .tar .gz .bz2 .xz .7z .rar .exe .dll .so .dylib .o .a .pyc .pyo .class .wasm .pdf .doc .docx .xls ' +
    '.xlsx .ppt .pptx .ttf .otf .woff .woff2 .eot .bin .dat .db .sqlite .sqlite3'
  ).split(' '),
);

/** Options of the file tools. */
export interface FsToolOptions {
  /** Backend to run on; defaults to the session's (`context.backend`). */
  backend?: ExecutionBackend;
  /**
   * What the tools may read on this machine (`readView` of `@rho/permissions`, or a function of
   * the call's working directory); default: the view of the call's working directory with the
   * defaults (rho's home and the user's home hidden, secrets masked).
   */
  view?: ReadViewSource;
}

/**
 * `read`: numbered lines of a text file. Streams the file in chunks, so any line range of a file
 * of any size (including its last lines) is read in bounded memory, and the footer reports the
 * true number of lines.
 */
export function createReadTool(options: FsToolOptions = {}) {
  return defineTool({
    name: 'read',
    description:
      'Read a text file and return its lines numbered (line number, two spaces, text). ' +
      `Returns at most ${READ_DEFAULT_LINES} lines per call by default: use start_line and end_line to page ` +
      `through longer files (at most ${READ_MAX_LINES} lines per call). Lines longer than ${READ_MAX_LINE_CHARS} characters are cut, ending with "[N chars omitted ...]". ` +
      'A negative start_line counts from the end of the file (-100 returns the last 100 lines). ' +
      'The footer "[Showing lines S-E of T]" tells the total number of lines. Binary files are refused. ' +
      'Relative paths are resolved against the working directory.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Path of the file to read.' },
        start_line: {
          type: 'integer',
          description: 'First line to return, 1-based (default 1). Negative: that many lines from the end.',
        },
        end_line: {
          type: 'integer',
          description: `Last line to return, inclusive (default start_line + ${READ_DEFAULT_LINES - 1}).`,
        },
      },
      required: ['path'],
      additionalProperties: false,
    },
    annotations: { readOnly: true },
    async handle({ arguments: args }, context) {
      if (!args.path) return failure('No path provided');
      const backend = backendOf(options.backend, context);
      const path = await resolvePath(backend, context.workingDir, args.path);
      const refusal = await readPathRefusal(backend, path, viewOf(options.view, backend, context));
      if (refusal !== undefined) return refusal;
      try {
        const info = await backend.stat(path);
        if (info.type !== 'file') return failure(`Not a file: ${path}`);
      } catch (error) {
        return fileError(error, path);
      }
      const extension = extname(path).toLowerCase();
      if (BINARY_EXTENSIONS.has(extension)) {
        return failure(
          `Cannot read binary file: ${path} (${extension} files are not text-readable). ` +
            "Use shell commands like 'file', 'exiftool', or 'strings' for binary inspection.",
        );
      }
      const requestedStart = args.start_line ?? 1;
      const fromEnd = requestedStart < 0 ? Math.min(-requestedStart, MAX_TAIL_LINES) : 0;
      const start = Math.max(1, requestedStart);
      const end = Math.min(args.end_line ?? start + READ_DEFAULT_LINES - 1, start + READ_MAX_LINES - 1);
      if (fromEnd === 0 && end < start) {
        return failure(`end_line (${end}) is before start_line (${start}): nothing to show`);
      }
      let handle: ReadHandle;
      try {
        handle = await backend.openRead(path);
      } catch (error) {
        return fileError(error, path);
      }
      let scan: ScanResult;
      try {
        scan = await scanLines(handle, fromEnd > 0 ? { last: fromEnd } : { start, end }, context.signal);
      } catch (error) {
        if (context.signal.aborted) return failure('Read cancelled');
        return fileError(error, path);
      } finally {
        await handle.close().catch(() => {});
      }
      if (scan.binary !== false) {
        const why =
          scan.binary === 'nul'
            ? 'it contains NUL bytes'
            : `${Math.round(scan.invalidShare * 100)}% of its first ${SNIFF_BYTES / 1024} KiB is not valid UTF-8`;
        return failure(
          `Cannot read binary file: ${path} (${why}, so it is not text). ` +
            "Use shell commands like 'file', 'exiftool', or 'strings' for binary inspection.",
        );
      }
      const total = scan.totalLines;
      const firstShown = fromEnd > 0 ? Math.max(1, total - fromEnd + 1) : start;
      if (total < firstShown || (fromEnd > 0 && total === 0)) {
        return failure(`Start line ${firstShown} exceeds file length (${total} lines)`);
      }
      const lastShown = firstShown + scan.lines.length - 1;
      const body = scan.lines
        .map((line, index) => `${String(firstShown + index).padStart(6)}  ${formatLine(line)}`)
        .join('\n');
      const footer =
        lastShown < total || firstShown > 1 ? `\n\n[Showing lines ${firstShown}-${lastShown} of ${total}]` : '';
      return {
        content: body + footer,
        success: true,
        metadata: { path, start_line: firstShown, end_line: lastShown, total_lines: total },
      };
    },
  });
}

/** A captured line: its first bytes, and whether more followed. */
interface CapturedLine {
  bytes: Buffer;
  cut: boolean;
}

interface ScanResult {
  lines: CapturedLine[];
  totalLines: number;
  /** Why the file is taken for binary: NUL bytes, or mostly invalid UTF-8 (see {@link READ_MAX_INVALID_UTF8_SHARE}). */
  binary: false | 'nul' | 'invalid-utf8';
  /** The share of replacement characters in the decoded sample. */
  invalidShare: number;
}

/** The share of characters of `sample` (the start of a file) that are not valid UTF-8. */
function invalidUtf8Share(sample: Buffer): number {
  // stream: true leaves out a character cut at the sample's end rather than counting it invalid.
  const text = new TextDecoder('utf-8').decode(sample, { stream: true });
  if (text.length === 0) return 0;
  let replaced = 0;
  for (let index = 0; index < text.length; index += 1) if (text.charCodeAt(index) === 0xfffd) replaced += 1;
  return replaced / text.length;
}

function formatLine(line: CapturedLine): string {
  return capLine(line.bytes.toString('utf8').trimEnd(), { maxChars: READ_MAX_LINE_CHARS, truncatedSource: line.cut });
}

/**
 * One pass over the file: counts every line and keeps the wanted ones (each capped). For the last
 * N lines only their start offsets are remembered (a ring), and the lines are read afterwards, so
 * memory stays bounded whatever the file's size.
 */
async function scanLines(
  handle: ReadHandle,
  want: { start: number; end: number } | { last: number },
  signal: AbortSignal,
): Promise<ScanResult> {
  // The first read is sized to the file (one byte more, so that read is short and ends the scan)
  // up to a megabyte: a small file costs no megabyte allocated (and zeroed) per call, and small
  // buffers come from Node's pool. Not zeroed: only the bytes a read returns are looked at.
  let buffer = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, handle.size + 1));
  const kept: CapturedLine[] = [];
  // One slot more than wanted: the line after the final newline (which may not exist) takes one.
  const ringSize = 'last' in want ? want.last + 1 : 0;
  const lineStarts = new Float64Array(ringSize);
  let lineNumber = 1;
  let current: Buffer[] | undefined;
  let currentBytes = 0;
  let currentCut = false;
  let position = 0;
  let lastByte = -1;
  // The first SNIFF_BYTES bytes, gathered across reads that may return less.
  const sample: Buffer[] = [];
  let sampled = 0;
  let sampleJudged = false;
  const judgeSample = (): ScanResult | undefined => {
    sampleJudged = true;
    const share = invalidUtf8Share(Buffer.concat(sample, sampled));
    return share > READ_MAX_INVALID_UTF8_SHARE
      ? { lines: [], totalLines: 0, binary: 'invalid-utf8', invalidShare: share }
      : undefined;
  };
  const beginLine = (lineStart: number): void => {
    if (ringSize > 0) lineStarts[(lineNumber - 1) % ringSize] = lineStart;
    if (!('last' in want) && lineNumber >= want.start && lineNumber <= want.end) {
      current = [];
      currentBytes = 0;
      currentCut = false;
    } else {
      current = undefined;
    }
  };
  const append = (bytes: Uint8Array): void => {
    if (current === undefined || bytes.byteLength === 0) return;
    const room = MAX_LINE_BYTES - currentBytes;
    if (room <= 0) {
      currentCut = true;
      return;
    }
    const take = Math.min(room, bytes.byteLength);
    current.push(Buffer.from(bytes.subarray(0, take)));
    currentBytes += take;
    if (take < bytes.byteLength) currentCut = true;
  };
  const keepCurrent = (): void => {
    if (current !== undefined) kept.push({ bytes: Buffer.concat(current, currentBytes), cut: currentCut });
  };
  beginLine(0);
  for (;;) {
    // Scanning a huge file takes seconds: stop when the run is cancelled.
    signal.throwIfAborted();
    const count = await handle.read(buffer, position, buffer.byteLength);
    if (count === 0) break;
    const chunk = buffer.subarray(0, count);
    if (position < SNIFF_BYTES) {
      const head = chunk.subarray(0, SNIFF_BYTES - position);
      if (head.includes(0)) return { lines: [], totalLines: 0, binary: 'nul', invalidShare: 0 };
      sample.push(Buffer.from(head));
      sampled += head.byteLength;
      if (sampled >= SNIFF_BYTES) {
        const verdict = judgeSample();
        if (verdict !== undefined) return verdict;
      }
    }
    let offset = 0;
    for (;;) {
      const newline = chunk.indexOf(10, offset);
      if (newline === -1) {
        append(chunk.subarray(offset));
        break;
      }
      append(chunk.subarray(offset, newline));
      keepCurrent();
      lineNumber += 1;
      beginLine(position + newline + 1);
      offset = newline + 1;
    }
    position += count;
    lastByte = chunk[count - 1] ?? lastByte;
    // A short read that reached the size the file had when it was opened is its end: one read
    // (one round trip to the backend) fewer than reading again to get 0. A backend may return
    // short reads before the end, so a short read before that size reads on.
    if (count < buffer.byteLength && position >= handle.size) break;
    // It did not end there (the file grew, or the backend reads less at a time): full chunks on.
    if (buffer.byteLength < CHUNK_BYTES) buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  }
  // A file shorter than the sample is judged on all of it.
  if (!sampleJudged) {
    const verdict = judgeSample();
    if (verdict !== undefined) return verdict;
  }
  // A last line without a final newline still counts.
  let totalLines = lineNumber - 1;
  if (position > 0 && lastByte !== 10) {
    totalLines += 1;
    keepCurrent();
  }
  if (ringSize > 0) {
    const first = Math.max(1, totalLines - ringSize + 2);
    const lineBuffer = new Uint8Array(MAX_LINE_BYTES + 1);
    for (let line = first; line <= totalLines; line += 1) {
      const lineStart = lineStarts[(line - 1) % ringSize] ?? 0;
      const count = await handle.read(lineBuffer, lineStart, lineBuffer.byteLength);
      const bytes = lineBuffer.subarray(0, count);
      const newline = bytes.indexOf(10);
      const lineEnd = newline === -1 ? Math.min(count, MAX_LINE_BYTES) : newline;
      kept.push({ bytes: Buffer.from(bytes.subarray(0, lineEnd)), cut: newline === -1 && count > MAX_LINE_BYTES });
    }
  }
  return { lines: kept, totalLines, binary: false, invalidShare: 0 };
}

function fileError(error: unknown, path: string) {
  switch (errorCode(error)) {
    case 'ENOENT':
      return failure(`File not found: ${path}`);
    case 'EISDIR':
    case 'ENOTDIR':
      return failure(`Not a file: ${path}`);
    case 'EACCES':
    case 'EPERM':
      return failure(`Permission denied: ${path}`);
    case 'ELOOP':
      return failure(`Error reading file: ${path} is a symlink loop (too many levels of symbolic links)`);
    default:
      return failure(`Error reading file: ${errorMessage(error)}`);
  }
}
