/**
 * The abort signal of one HTTP attempt: it aborts when the caller's signal aborts, or when the
 * watchdog fires while the client waits on the network. Until the first chunk of the answer has
 * arrived the watchdog allows `firstByteTimeoutMs` (headers and first token: a CPU-hosted model
 * may need minutes); after it, `idleTimeoutMs` between two chunks. The watchdog is paused while
 * the consumer handles an event, so a slow consumer never looks like a dead server.
 */
export class AttemptController {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private readonly onCallerAbort: () => void;
  private answering = false;
  /** Which watchdog fired, if one did. */
  timedOut: 'first_byte' | 'idle' | undefined = undefined;

  constructor(
    private readonly firstByteTimeoutMs: number,
    private readonly idleTimeoutMs: number,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    this.onCallerAbort = () => this.controller.abort(callerSignal?.reason);
    if (callerSignal?.aborted) this.controller.abort(callerSignal.reason);
    else callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
    this.arm();
  }

  /** The signal to hand to the HTTP request. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The limit of the watchdog that fired (or of the current phase), in milliseconds. */
  get timeoutMs(): number {
    return (this.timedOut ?? (this.answering ? 'idle' : 'first_byte')) === 'idle'
      ? this.idleTimeoutMs
      : this.firstByteTimeoutMs;
  }

  /** The first chunk of the answer arrived: from now on the idle timeout applies. */
  answered(): void {
    this.answering = true;
  }

  /** Restarts the watchdog: something arrived, or the consumer handed control back. */
  arm(): void {
    this.pause();
    if (this.controller.signal.aborted) return;
    const phase = this.answering ? 'idle' : 'first_byte';
    const limit = phase === 'idle' ? this.idleTimeoutMs : this.firstByteTimeoutMs;
    this.timer = setTimeout(() => {
      this.timedOut = phase;
      this.controller.abort(new Error(`no response for ${limit} ms`));
    }, limit);
  }

  /** Stops the watchdog while the consumer, not the network, holds control. */
  pause(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Releases the timer and the listener on the caller's signal. */
  dispose(): void {
    this.pause();
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }
}
