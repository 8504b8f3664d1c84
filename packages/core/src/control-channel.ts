import { closeSync, existsSync, fstatSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** A directive taken from the channel, with the position to acknowledge it at. */
export interface TakenDirectives {
  /** The directives' texts, in order (refused lines excluded). */
  texts: string[];
  /** Opaque cursor just past everything taken; the next call starts from it. */
  cursor: number;
  /**
   * Every line taken, in order, each with the cursor just past it (recorded in its `directive`
   * trace record, so a crash between two directives of one batch neither loses nor repeats one).
   * A line that is not a directive (`{"text": string}`) has `refused` saying why and is not
   * delivered. Channels that leave it out have their `texts` delivered with the batch's cursor.
   */
  items?: { text: string; cursor: number; refused?: string }[];
}

/**
 * How operators reach a running session: cancel, pause, directives. Files in the session
 * directory by default; a database implementation for fleets can take its place.
 */
export interface ControlChannel {
  /** Whether a cancel was requested. */
  isCancelRequested(): Promise<boolean>;
  /** Whether the session is asked to hold. */
  isPauseRequested(): Promise<boolean>;
  /** Directives queued since `cursor`, each delivered once. */
  takeDirectives(cursor: number): Promise<TakenDirectives>;
  /** Clears a cancel request once the run has stopped. */
  clearCancel(): Promise<void>;
  /** Asks the session to cancel (used by `Session.cancel()`, so other processes see it too). */
  requestCancel(): Promise<void>;
}

/** Names of the control files in a session directory. */
export const CONTROL_FILES = { cancel: 'cancel', pause: 'pause', directives: 'directives.jsonl' } as const;

/**
 * The file control channel of a session directory: `cancel` and `pause` are sentinel files;
 * `directives.jsonl` is append-only (writers append whole lines with one `write(2)`), and the
 * reader remembers how many bytes it consumed instead of truncating, so a directive appended while
 * the agent reads is never lost or delivered twice.
 */
export class FileControlChannel implements ControlChannel {
  constructor(readonly directory: string) {}

  async isCancelRequested(): Promise<boolean> {
    return existsSync(join(this.directory, CONTROL_FILES.cancel));
  }

  async isPauseRequested(): Promise<boolean> {
    return existsSync(join(this.directory, CONTROL_FILES.pause));
  }

  async takeDirectives(cursor: number): Promise<TakenDirectives> {
    const path = join(this.directory, CONTROL_FILES.directives);
    // Checked every turn: a stat that does not throw is far cheaper than a failing open.
    const info = statSync(path, { throwIfNoEntry: false });
    if (info === undefined) return { texts: [], cursor: 0 };
    if (info.size === cursor) return { texts: [], cursor };
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch {
      return { texts: [], cursor: 0 };
    }
    try {
      const size = fstatSync(fd).size;
      // The file was truncated or replaced (by an operator or the Python original): start over.
      const start = size < cursor ? 0 : cursor;
      if (size === start) return { texts: [], cursor: start };
      const buffer = Buffer.alloc(size - start);
      let read = 0;
      while (read < buffer.length) {
        const count = readSync(fd, buffer, read, buffer.length - read, start + read);
        if (count === 0) break;
        read += count;
      }
      // Only whole lines: a line still being written is taken next time.
      const lastNewline = buffer.lastIndexOf(0x0a, read - 1);
      if (lastNewline === -1) return { texts: [], cursor: start };
      const items: { text: string; cursor: number; refused?: string }[] = [];
      let lineStart = 0;
      while (lineStart <= lastNewline) {
        const lineEnd = buffer.indexOf(0x0a, lineStart);
        const line = buffer.subarray(lineStart, lineEnd).toString('utf8').trim();
        lineStart = lineEnd + 1;
        if (line === '') continue;
        const cursor = start + lineStart;
        const text = directiveText(line);
        if (typeof text === 'string') items.push({ text, cursor });
        else items.push({ text: line, cursor, refused: text.refused });
      }
      return { texts: items.flatMap((item) => (item.refused === undefined ? [item.text] : [])), cursor: start + lastNewline + 1, items };
    } finally {
      closeSync(fd);
    }
  }

  async clearCancel(): Promise<void> {
    rmSync(join(this.directory, CONTROL_FILES.cancel), { force: true });
  }

  async requestCancel(): Promise<void> {
    const { writeFileSync } = await import('node:fs');
    writeFileSync(join(this.directory, CONTROL_FILES.cancel), '');
  }
}

/** The text of a directive line (`{"text": string}`), or why the line is refused. */
function directiveText(line: string): string | { refused: string } {
  const shown = line.length > 200 ? `${line.slice(0, 200)}...` : line;
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { refused: `the line is not JSON: ${shown}. A directive is one line {"text": "..."}; send it with rho directive.` };
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { text?: unknown }).text === 'string') {
    const text = (value as { text: string }).text;
    if (text.trim() !== '') return text;
    return { refused: 'the directive\'s text is empty.' };
  }
  return { refused: `the line is not {"text": string}: ${shown}.` };
}
