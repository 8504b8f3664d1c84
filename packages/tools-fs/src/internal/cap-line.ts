/** Where a capped line keeps its window: the match (in UTF-16 indices of the text). */
export interface LineFocus {
  start: number;
  end: number;
}

/** Options of {@link capLine}. */
export interface CapLineOptions {
  /** Characters of the line kept at most (markers not counted). */
  maxChars: number;
  /** Centre the kept window on this span (a match) instead of keeping the start of the line. */
  focus?: LineFocus;
  /** The text is itself only the start of a longer line (read with a byte cap): more follows. */
  truncatedSource?: boolean;
}

/**
 * Caps one line of a tool result for the model. A line within `maxChars` is returned as is;
 * a longer one keeps `maxChars` characters, centred on `focus` when given (so a search shows the
 * match, not the start of a minified file), and says on each side how many characters were left
 * out: `[... 14998 chars omitted] ...needle... [14996 chars omitted ...]`. One helper for every
 * tool that caps lines, so the model reads one format.
 */
export function capLine(text: string, options: CapLineOptions): string {
  const { maxChars, focus, truncatedSource = false } = options;
  const length = text.length;
  if (length <= maxChars) return truncatedSource ? `${text}${rightMarker(0, true)}` : text;
  let start = 0;
  if (focus !== undefined) {
    const from = clamp(focus.start, 0, length);
    const to = clamp(Math.max(focus.end, from), from, length);
    const room = maxChars - (to - from);
    // A match longer than the window shows its beginning; otherwise split what is left evenly.
    start = room <= 0 ? from : from - Math.floor(room / 2);
    start = clamp(start, 0, length - maxChars);
  }
  let end = start + maxChars;
  // Never split a surrogate pair.
  if (start > 0 && isLowSurrogate(text.charCodeAt(start))) start += 1;
  if (end < length && isLowSurrogate(text.charCodeAt(end))) end -= 1;
  const before = start;
  const after = length - end;
  return `${before > 0 ? leftMarker(before) : ''}${text.slice(start, end)}${after > 0 || truncatedSource ? rightMarker(after, truncatedSource) : ''}`;
}

function leftMarker(count: number): string {
  return `[... ${count} chars omitted] `;
}

function rightMarker(count: number, more: boolean): string {
  return ` [${count}${more ? '+' : ''} chars omitted ...]`;
}

function clamp(value: number, low: number, high: number): number {
  return Math.min(Math.max(value, low), high);
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
