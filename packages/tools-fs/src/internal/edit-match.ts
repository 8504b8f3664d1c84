/** Outcome of applying an edit to a file's text. */
export type EditOutcome =
  | { ok: true; text: string; strategy: 'exact match' | 'whitespace-normalized match' | 'indentation-flexible match' }
  | { ok: false; message: string };

/**
 * The original's three-stage match: exact; then line windows equal after stripping trailing
 * whitespace; then line windows equal after stripping leading whitespace, with `replacement`
 * re-indented to the matched block. A match that is not unique is refused at the first stage
 * that finds any.
 */
export function applyEdit(text: string, target: string, replacement: string): EditOutcome {
  const exact = countOccurrences(text, target);
  if (exact === 1) {
    const index = text.indexOf(target);
    return {
      ok: true,
      text: text.slice(0, index) + replacement + text.slice(index + target.length),
      strategy: 'exact match',
    };
  }
  if (exact > 1) return { ok: false, message: `old_string appears ${exact} times (must be unique). Add more context.` };

  const lines = text.split('\n');
  const targetLines = target.split('\n');
  const trailing = findWindows(lines, targetLines, (line) => line.trimEnd());
  if (trailing.length > 1)
    return { ok: false, message: `Found ${trailing.length} whitespace-normalized matches (must be unique)` };
  if (trailing.length === 1) {
    const start = trailing[0] ?? 0;
    return {
      ok: true,
      text: replaceWindow(
        lines,
        start,
        targetLines.length,
        matchLineEndings(lines, start, targetLines.length, replacement),
      ),
      strategy: 'whitespace-normalized match',
    };
  }
  const leading = findWindows(lines, targetLines, (line) => line.trimStart());
  if (leading.length > 1)
    return { ok: false, message: `Found ${leading.length} indentation-flexible matches (must be unique)` };
  if (leading.length === 1) {
    const start = leading[0] ?? 0;
    const baseIndent = /^\s*/.exec(lines[start] ?? '')?.[0] ?? '';
    const reindented = reindent(replacement, baseIndent.replace(/\r/g, ''));
    return {
      ok: true,
      text: replaceWindow(
        lines,
        start,
        targetLines.length,
        matchLineEndings(lines, start, targetLines.length, reindented),
      ),
      strategy: 'indentation-flexible match',
    };
  }
  return { ok: false, message: 'old_string not found in file. Check for typos or add more context.' };
}

function countOccurrences(text: string, target: string): number {
  if (target.length === 0) return 0;
  let count = 0;
  for (let index = text.indexOf(target); index !== -1; index = text.indexOf(target, index + target.length)) count += 1;
  return count;
}

function findWindows(lines: string[], targetLines: string[], normalize: (line: string) => string): number[] {
  const wanted = targetLines.map(normalize);
  const normalized = lines.map(normalize);
  const found: number[] = [];
  for (let start = 0; start + wanted.length <= normalized.length; start += 1) {
    if (wanted.every((line, offset) => normalized[start + offset] === line)) found.push(start);
  }
  return found;
}

/** Replaces lines `start .. start+count-1` with `replacement`, keeping the surrounding newlines. */
function replaceWindow(lines: string[], start: number, count: number, replacement: string): string {
  const before = lines.slice(0, start);
  const after = lines.slice(start + count);
  return [...before, replacement, ...after].join('\n');
}

/** In a CRLF file, a replacement written with bare `\n` gets `\r\n` too. */
function matchLineEndings(lines: string[], start: number, count: number, replacement: string): string {
  const window = lines.slice(start, start + count);
  const crlf = window.length > 0 && window.every((line) => line.endsWith('\r'));
  // The window's last line lends its `\r` to the newline that follows the window.
  return crlf && !replacement.includes('\r') ? `${replacement.replace(/\n/g, '\r\n')}\r` : replacement;
}

/** Indents `replacement` under `baseIndent`, keeping each line's indentation relative to the least indented. */
function reindent(replacement: string, baseIndent: string): string {
  const newLines = replacement.split('\n');
  const indents = newLines.filter((line) => line.trim() !== '').map((line) => /^\s*/.exec(line)?.[0].length ?? 0);
  const minimum = indents.length === 0 ? 0 : Math.min(...indents);
  return newLines
    .map((line) => {
      if (line.trim() === '') return line;
      const indent = /^\s*/.exec(line)?.[0].length ?? 0;
      return baseIndent + ' '.repeat(indent - minimum) + line.trimStart();
    })
    .join('\n');
}
