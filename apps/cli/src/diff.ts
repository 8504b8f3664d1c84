import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';

/** One line of a diff: kept (context), removed or added. */
export interface DiffLine {
  kind: ' ' | '-' | '+';
  text: string;
}

/** Lines compared with the quadratic LCS at most (beyond it, the changed middle is shown whole). */
const LCS_CELLS = 2_000_000;

/**
 * A line diff of `before` → `after` with `context` unchanged lines around each change, as
 * unified-diff lines (`@@` hunk headers included). Common head and tail are trimmed first, so an
 * edit in a large file costs what the edit costs.
 */
export function unifiedDiff(before: string, after: string, context = 2): string[] {
  const a = splitLines(before);
  const b = splitLines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail])
    tail += 1;
  const middle = diffMiddle(a.slice(head, a.length - tail), b.slice(head, b.length - tail));
  const lines: DiffLine[] = [
    ...a.slice(0, head).map((text) => ({ kind: ' ' as const, text })),
    ...middle,
    ...a.slice(a.length - tail).map((text) => ({ kind: ' ' as const, text })),
  ];
  return hunks(lines, context);
}

/**
 * The diff an `edit` or `write` call would make (or made), read against the file on disk; for
 * other tools, or arguments of the wrong shape, undefined. `before` overrides the file's content
 * (for showing a write after it happened, with the content captured before it).
 */
export function toolCallDiff(
  toolName: string,
  args: unknown,
  workingDir: string,
  before?: string,
): { path: string; lines: string[] } | undefined {
  if (typeof args !== 'object' || args === null) return undefined;
  const { path } = args as { path?: unknown };
  if (typeof path !== 'string' || path === '') return undefined;
  if (toolName === 'write') {
    const { content } = args as { content?: unknown };
    if (typeof content !== 'string') return undefined;
    const old = before ?? readText(resolvePath(path, workingDir)) ?? '';
    return { path, lines: unifiedDiff(old, content) };
  }
  if (toolName === 'edit') {
    const { old_string: oldString, new_string: newString } = args as { old_string?: unknown; new_string?: unknown };
    if (typeof oldString !== 'string' || typeof newString !== 'string') return undefined;
    const file = before ?? readText(resolvePath(path, workingDir));
    // With the file at hand the hunk shows where it is and its neighbours; without (or when the
    // text is not found verbatim: the tool may match ignoring whitespace) the two strings alone.
    if (file !== undefined && file.split(oldString).length === 2)
      return {
        path,
        lines: unifiedDiff(
          file,
          file.replace(oldString, () => newString),
        ),
      };
    return { path, lines: unifiedDiff(oldString, newString, 0) };
  }
  return undefined;
}

/** The current content of the file a `write`/`edit` call names, to diff against after the call. */
export function contentBefore(toolName: string, args: unknown, workingDir: string): string | undefined {
  if (toolName !== 'write' && toolName !== 'edit') return undefined;
  const path = typeof args === 'object' && args !== null ? (args as { path?: unknown }).path : undefined;
  return typeof path === 'string' && path !== '' ? (readText(resolvePath(path, workingDir)) ?? '') : undefined;
}

function resolvePath(path: string, workingDir: string): string {
  if (path.startsWith('~/')) return resolve(process.env.HOME ?? '/', path.slice(2));
  return isAbsolute(path) ? path : resolve(workingDir, path);
}

function readText(path: string): string | undefined {
  try {
    const text = readFileSync(path, 'utf8');
    // A binary file has no line diff worth showing.
    return text.includes('\u0000') ? undefined : text;
  } catch {
    return undefined;
  }
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

function diffMiddle(a: string[], b: string[]): DiffLine[] {
  if (a.length * b.length > LCS_CELLS)
    return [...a.map((text) => ({ kind: '-' as const, text })), ...b.map((text) => ({ kind: '+' as const, text }))];
  // lengths[i][j]: LCS of a[i..] and b[j..], in one flat array.
  const width = b.length + 1;
  const lengths = new Uint32Array((a.length + 1) * width);
  for (let i = a.length - 1; i >= 0; i -= 1) {
    for (let j = b.length - 1; j >= 0; j -= 1) {
      lengths[i * width + j] =
        a[i] === b[j]
          ? lengths[(i + 1) * width + j + 1]! + 1
          : Math.max(lengths[(i + 1) * width + j]!, lengths[i * width + j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ kind: ' ', text: a[i]! });
      i += 1;
      j += 1;
    } else if (lengths[(i + 1) * width + j]! >= lengths[i * width + j + 1]!) {
      out.push({ kind: '-', text: a[i]! });
      i += 1;
    } else {
      out.push({ kind: '+', text: b[j]! });
      j += 1;
    }
  }
  while (i < a.length) out.push({ kind: '-', text: a[i++]! });
  while (j < b.length) out.push({ kind: '+', text: b[j++]! });
  return out;
}

function hunks(lines: DiffLine[], context: number): string[] {
  const changed = lines.map((line, index) => (line.kind === ' ' ? -1 : index)).filter((index) => index >= 0);
  if (changed.length === 0) return [];
  const out: string[] = [];
  let start = 0;
  while (start < changed.length) {
    let end = start;
    while (end + 1 < changed.length && changed[end + 1]! - changed[end]! <= context * 2 + 1) end += 1;
    const from = Math.max(0, changed[start]! - context);
    const to = Math.min(lines.length - 1, changed[end]! + context);
    let oldLine = 1;
    let newLine = 1;
    for (let index = 0; index < from; index += 1) {
      if (lines[index]!.kind !== '+') oldLine += 1;
      if (lines[index]!.kind !== '-') newLine += 1;
    }
    const slice = lines.slice(from, to + 1);
    const oldCount = slice.filter((line) => line.kind !== '+').length;
    const newCount = slice.filter((line) => line.kind !== '-').length;
    out.push(
      `@@ -${oldCount === 0 ? oldLine - 1 : oldLine},${oldCount} +${newCount === 0 ? newLine - 1 : newLine},${newCount} @@`,
    );
    for (const line of slice) out.push(`${line.kind}${line.text}`);
    start = end + 1;
  }
  return out;
}
