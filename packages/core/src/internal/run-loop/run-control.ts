import type { AnswerOutcome, ApprovalAnswer } from '../../approvals.js';
import type { ControlChannel } from '../../control-channel.js';
import type { SessionStatus } from '../../events.js';
import { updateSessionMeta } from '../../session-meta.js';
import type { State } from '../../state.js';
import { DIRECTIVE_PREFIX } from '../../state.js';

/** What {@link RunControl} works on. */
export interface RunControlOptions {
  /** Written into meta.json with every patch. */
  sessionId: string;
  /** Where status changes and directives are recorded. */
  state: State;
  /** The session directory (meta.json), if any. */
  directory: string | undefined;
  /** Where pause, cancel and directives come from, if anywhere. */
  control: ControlChannel | undefined;
  /** How often to poll for cancel and resume while running or paused. */
  pollIntervalMs: number;
}

/**
 * How a running session hears from its operator and shows it is alive: pause and cancel through
 * the control channel, directives delivered as user messages, status and heartbeat reported
 * through the channel, and the run's own fields (start, outcome) merged into meta.json.
 */
export class RunControl {
  constructor(private readonly options: RunControlOptions) {}

  /** How often the channel is polled. */
  get pollIntervalMs(): number {
    return this.options.pollIntervalMs;
  }

  /** Before a model call or a tool call: holds while paused, returns false when cancelled. */
  async checkpoint(controller: AbortController): Promise<boolean> {
    const { control, pollIntervalMs } = this.options;
    if (controller.signal.aborted) return false;
    if (control === undefined) return true;
    if (await control.isCancelRequested()) {
      controller.abort();
      return false;
    }
    if (!(await control.isPauseRequested())) return true;
    this.setStatus('paused');
    try {
      while (!controller.signal.aborted) {
        await delay(pollIntervalMs, controller.signal);
        if (await control.isCancelRequested()) {
          controller.abort();
          break;
        }
        if (!(await control.isPauseRequested())) break;
      }
    } finally {
      this.setStatus('running');
    }
    return !controller.signal.aborted;
  }

  /** Delivers queued operator directives as user messages, each exactly once. */
  async deliverDirectives(): Promise<void> {
    const { control, state } = this.options;
    if (control === undefined) return;
    const taken = await control.takeDirectives(state.directiveCursor);
    // Each record carries the cursor just past its own line: a crash between two directives of a
    // batch neither loses the second nor repeats the first.
    const items: { text: string; cursor: number; refused?: string }[] =
      taken.items ?? taken.texts.map((text) => ({ text, cursor: taken.cursor }));
    for (const item of items) {
      if (item.refused !== undefined) {
        state.append({
          type: 'error',
          content: `Directive refused (not sent to the model): ${item.refused}`,
          code: 'directive_refused',
        });
        continue;
      }
      state.append({ type: 'directive', text: item.text, cursor: item.cursor });
      state.addMessage({ role: 'user', content: `${DIRECTIVE_PREFIX}${item.text}` }, { directive: true });
    }
    state.directiveCursor = taken.cursor;
  }

  /** Records a status change (paused, waiting for approval, running) in the trace and reports it through the control channel. */
  setStatus(status: SessionStatus): void {
    if (this.options.state.status === status) return;
    this.options.state.append({ type: 'status', status });
    void this.options.control?.reportStatus(status).catch(() => {});
  }

  /** Merges `patch` into meta.json, when the session has a directory; never fails the run. */
  writeMeta(patch: Parameters<typeof updateSessionMeta>[1]): void {
    const { directory, sessionId } = this.options;
    if (directory === undefined) return;
    try {
      updateSessionMeta(directory, { id: sessionId, ...patch });
    } catch {
      // meta.json is a convenience for the monitor; the trace is the source of truth.
    }
  }

  /**
   * While a run is in progress: polls the control channel for cancel (so a long model stream or
   * tool stops promptly) and refreshes the heartbeat about every five seconds. Returns the stop.
   */
  startPolling(controller: AbortController): () => void {
    const { control, directory, pollIntervalMs } = this.options;
    if (control === undefined && directory === undefined) return () => {};
    let ticks = 0;
    const heartbeatEvery = Math.max(1, Math.round(5_000 / pollIntervalMs));
    const timer = setInterval(() => {
      ticks += 1;
      void control?.isCancelRequested().then(
        (cancelled) => {
          if (cancelled) controller.abort();
        },
        () => {},
      );
      if (ticks % heartbeatEvery === 0) void control?.heartbeat().catch(() => {});
    }, pollIntervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Whether an operator asked the session to stop (false without a channel, or when the channel fails). */
  async cancelRequested(): Promise<boolean> {
    try {
      return (await this.options.control?.isCancelRequested()) === true;
    } catch {
      return false;
    }
  }

  /** Whether answers can come from outside this process (the channel carries approvals). */
  get carriesApprovals(): boolean {
    return this.options.control?.takeApprovalAnswer !== undefined;
  }

  /** The answer recorded on the channel for a waiting call, if any (a channel failure counts as none yet). */
  async takeApprovalAnswer(toolCallId: string): Promise<ApprovalAnswer | undefined> {
    try {
      return await this.options.control?.takeApprovalAnswer?.(toolCallId);
    } catch {
      return undefined;
    }
  }

  /** Records `answer` on the channel unless another came first; without a channel, `answer` wins. */
  async settleApproval(toolCallId: string, answer: ApprovalAnswer): Promise<AnswerOutcome> {
    const settle = this.options.control?.settleApproval;
    if (settle === undefined) return { outcome: 'answered', answer };
    return settle.call(this.options.control, toolCallId, answer);
  }

  /** Clears a cancel request once the run has ended, so the next run does not stop at once. */
  async clearCancel(): Promise<void> {
    await this.options.control?.clearCancel();
  }
}

function delay(milliseconds: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, milliseconds);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
