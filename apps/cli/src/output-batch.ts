/** Output gathered for one write is written at once past this many characters. */
const OUTPUT_FLUSH_BYTES = 64 * 1024;

/**
 * The event renderer's writes, gathered: output goes out in one write per stream, in order, for
 * each event, or with `perTick` once per turn of the event loop (setImmediate): each write to a
 * pipe or terminal is a system call, and a tool turn's three or four events (the turn's usage
 * line, the call, its result and preview) happen in one turn of the loop. Anything that writes to
 * the terminal by other means (the approval prompt, run-command's own notices) calls flush()
 * first, so nothing is reordered; more than OUTPUT_FLUSH_BYTES gathered is written at once, so
 * memory stays bounded.
 */
export class OutputBatch {
  /** Inside a render (above 0): writes are gathered; outside (the status line's timer), per tick or at once. */
  rendering = 0;
  private pending: { to: (text: string) => void; text: string }[] = [];
  private pendingBytes = 0;
  private flushScheduled = false;

  constructor(private readonly perTick: boolean) {}

  /** Writes what is gathered now. */
  readonly flush = (): void => {
    this.flushScheduled = false;
    if (this.pending.length === 0) return;
    const writes = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    for (const { to, text } of writes) to(text);
  };

  /** A writer to `to` whose text is gathered with the others'. */
  writer(to: (text: string) => void): (text: string) => void {
    return (text) => {
      const last = this.pending.at(-1);
      if (last?.to === to) last.text += text;
      else this.pending.push({ to, text });
      this.pendingBytes += text.length;
      if (this.pendingBytes >= OUTPUT_FLUSH_BYTES || this.rendering === 0) this.flush();
      else if (this.perTick && !this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(this.flush);
      }
    };
  }
}
