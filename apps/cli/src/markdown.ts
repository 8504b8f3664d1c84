/** Turns Markdown into terminal text (ANSI styles, wrapped to the width it was made for). */
export type MarkdownRenderer = (markdown: string) => string;

let loading: Promise<MarkdownRenderer> | undefined;

/**
 * Loads marked and marked-terminal (with cli-highlight for code blocks) on first use: about
 * 100 ms, so only a run whose answer is rendered pays it, and it is started before the session is
 * set up so it overlaps that work. Without colour the styles are stripped and the layout stays.
 */
export function loadMarkdownRenderer(options: { width: number; color: boolean }): Promise<MarkdownRenderer> {
  loading ??= (async () => {
    const [{ Marked }, { markedTerminal }] = await Promise.all([import('marked'), import('marked-terminal')]);
    const marked = new Marked();
    marked.use(
      markedTerminal({
        reflowText: true,
        width: Math.max(20, options.width),
        tab: 2,
        emoji: false,
        showSectionPrefix: false,
      }) as never,
    );
    return (markdown: string) => {
      const rendered = (marked.parse(markdown, { async: false }) as string).replace(/\n+$/, '\n');
      // A style left open by the highlighter must not colour what is printed next.
      return options.color ? `${rendered.replace(/\n$/, '')}\u001b[0m\n` : stripAnsi(rendered);
    };
  })();
  return loading;
}

/** Text without ANSI escape sequences. */
export function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;?]*[A-Za-z]|\u001b\]8;[^\u0007\u001b]*(?:\u0007|\u001b\\)/g, '');
}

/**
 * Splits streamed Markdown into blocks that are complete: everything up to the last blank line
 * that is outside a fenced code block. What follows stays pending until more text (or the end)
 * arrives, so a block is rendered once, whole, and never cut mid-word.
 */
export class MarkdownBlocks {
  private pending = '';
  /** Where the first line not yet looked at starts in `pending` (lines are looked at once). */
  private scanned = 0;
  private inFence = false;
  /** End of the last blank line outside a fence (0: none yet). */
  private cut = 0;

  /** Adds streamed text; returns the Markdown of the blocks it completed ('' when none). */
  push(text: string): string {
    this.pending += text;
    // Only complete lines, each once: a long answer costs what its length costs.
    for (
      let newline = this.pending.indexOf('\n', this.scanned);
      newline !== -1;
      newline = this.pending.indexOf('\n', this.scanned)
    ) {
      const line = this.pending.slice(this.scanned, newline);
      if (/^\s{0,3}(```|~~~)/.test(line)) this.inFence = !this.inFence;
      else if (!this.inFence && line.trim() === '') this.cut = newline + 1;
      this.scanned = newline + 1;
    }
    if (this.cut === 0) return '';
    const done = this.pending.slice(0, this.cut);
    this.pending = this.pending.slice(this.cut);
    this.scanned -= this.cut;
    this.cut = 0;
    return done.trim() === '' ? '' : done;
  }

  /** The rest of the answer; the splitter is empty afterwards. */
  flush(): string {
    const rest = this.pending;
    this.pending = '';
    this.scanned = 0;
    this.cut = 0;
    this.inFence = false;
    return rest;
  }
}
