/**
 * The abort signal of one HTTP attempt: it aborts when the caller's signal aborts, or when the
 * watchdog fires while the client waits on the network. Until the first chunk of the answer has
 * arrived the watchdog allows `firstByteTimeoutMs` (headers and first token: a CPU-hosted model
 * may need minutes); after it, `idleTimeoutMs` between two chunks. The watchdog is paused while
 * the consumer handles an event, so a slow consumer never looks like a dead server.
 */
export class AttemptController {
  private readonly controller = new AbortController();
  // One timer, moved lazily: arming (once per chunk and per event handed out) only moves the
  // deadline, and the timer, when it fires early, sets itself for what is left. Setting a new
  // timer per chunk cost a Timeout object and a timer-list insertion each time (0.1-0.15 ms a
  // turn in a 200-turn profile).
  private timer: NodeJS.Timeout | undefined;
  /** When the timer fires (performance.now() time). */
  private timerAt = Number.POSITIVE_INFINITY;
  /** When the watchdog fires unless armed again; infinite while paused. */
  private deadline = Number.POSITIVE_INFINITY;
  private phase: 'first_byte' | 'idle' = 'first_byte';
  private readonly onCallerAbort: () => void;
  private answering = false;
  /** Which watchdog fired, if one did (`answer`: the whole answer took longer than its limit). */
  timedOut: 'first_byte' | 'idle' | 'answer' | undefined = undefined;
  /** The bound on the whole answer: one timer for the attempt, never moved. */
  private answerTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly firstByteTimeoutMs: number,
    private readonly idleTimeoutMs: number,
    private readonly callerSignal: AbortSignal | undefined,
    /**
     * Longest time one attempt may take from sending the request to the end of its answer,
     * whatever arrives meanwhile (a server that drips one character a second never lets the idle
     * watchdog fire). Infinite when not given.
     */
    private readonly answerTimeoutMs: number = Number.POSITIVE_INFINITY,
  ) {
    this.onCallerAbort = () => this.controller.abort(callerSignal?.reason);
    if (callerSignal?.aborted) this.controller.abort(callerSignal.reason);
    else callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
    if (Number.isFinite(answerTimeoutMs)) {
      this.answerTimer = setTimeout(() => {
        this.answerTimer = undefined;
        if (this.controller.signal.aborted) return;
        this.timedOut = 'answer';
        this.controller.abort(new Error(`the answer took longer than ${answerTimeoutMs} ms`));
      }, answerTimeoutMs);
      // Only a request in flight keeps the process alive, as with the other watchdogs.
      this.answerTimer.unref();
    }
    this.arm();
  }

  /** Stops the attempt for a reason of the caller's own (an answer over its size bound). */
  abort(reason: Error): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  /** The signal to hand to the HTTP request. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The limit of the watchdog that fired (or of the current phase), in milliseconds. */
  get timeoutMs(): number {
    if (this.timedOut === 'answer') return this.answerTimeoutMs;
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
    if (this.controller.signal.aborted) return;
    this.phase = this.answering ? 'idle' : 'first_byte';
    this.deadline = performance.now() + (this.phase === 'idle' ? this.idleTimeoutMs : this.firstByteTimeoutMs);
    if (this.timer === undefined || this.timerAt > this.deadline) this.schedule(this.deadline);
    else this.timer.ref();
  }

  /** Stops the watchdog while the consumer, not the network, holds control. */
  pause(): void {
    this.deadline = Number.POSITIVE_INFINITY;
    // A paused watchdog keeps no process alive, as when it had no timer at all.
    this.timer?.unref();
  }

  /** Releases the timer and the listener on the caller's signal. */
  dispose(): void {
    this.deadline = Number.POSITIVE_INFINITY;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.answerTimer !== undefined) clearTimeout(this.answerTimer);
    this.answerTimer = undefined;
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }

  private schedule(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.fire(), Math.max(0, at - performance.now()));
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    // Paused: the next arm() sets a timer again.
    if (this.deadline === Number.POSITIVE_INFINITY || this.controller.signal.aborted) return;
    if (performance.now() < this.deadline) {
      this.schedule(this.deadline);
      return;
    }
    const limit = this.phase === 'idle' ? this.idleTimeoutMs : this.firstByteTimeoutMs;
    this.timedOut = this.phase;
    this.controller.abort(new Error(`no response for ${limit} ms`));
  }
}
