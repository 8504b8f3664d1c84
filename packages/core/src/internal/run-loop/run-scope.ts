import type { ModelClient } from '@rho/model-client';
import type { Agent } from '../../agent.js';
import type { ChildSessions } from '../../child-sessions.js';
import type { ContextWindowResolver } from '../../context-window-resolver.js';
import type { SessionEvent } from '../../events.js';
import type { SecretRedactor } from '../../secret-redaction.js';
import type { ApprovalAnswer } from '../../approvals.js';
import type { Approver, ResolvedApprovals, ToolHooks } from '../../session-options.js';
import type { State } from '../../state.js';
import type { RunControl } from './run-control.js';

/** Receives the events of a run. */
export type EventListener = (event: SessionEvent) => void;

/** What the parts of the loop share during one run of a session. */
export interface RunScope {
  /** The running session's id (tool contexts and approval requests carry it). */
  readonly sessionId: string;
  /** System prompt, tools, approval decision, working directory and backend. */
  readonly agent: Agent;
  /** The conversation; every change goes through it to the trace. */
  readonly state: State;
  /** The session's model client. */
  readonly client: ModelClient;
  /** The session's context window (resolved once per session). */
  readonly window: ContextWindowResolver;
  /** Aborted when the run is cancelled (by `cancel()`, the caller's signal or the control channel). */
  readonly controller: AbortController;
  /** The session's and the run's listeners, for transient events (text and reasoning deltas). */
  readonly listeners: readonly EventListener[];
  /** Pause, cancel, directives, status and heartbeat. */
  readonly control: RunControl;
  /** Read at each call that needs approval: the approver may be replaced between runs. */
  readonly approver: Approver | undefined;
  /** Handed to the tool of call `call` as `ToolContext.children`. */
  childrenFor(call: { id: string; name: string }): ChildSessions;
  /** What happens to a call that needs approval when no approver answers it (defaults applied). */
  readonly approvals: ResolvedApprovals;
  /** Hooks around each tool call, if any. */
  readonly toolHooks: ToolHooks | undefined;
  /** Answers given in this process (`session.answerApproval`) to waiting calls, by call id. */
  readonly localAnswers: LocalAnswers;
  /** How the run's tool calls went so far: a run whose every call was refused ends `refused`. */
  readonly toolTally: { ran: number; refused: number };
  /**
   * Whether the run was stopped from outside (`RunOptions.signal`: a process shutting down)
   * rather than cancelled: a call waiting for approval then stays waiting, for a resumed run.
   */
  stoppedFromOutside(): boolean;
}

/** Answers given in this process, first one per call wins; a waiting call is woken when its answer arrives. */
export class LocalAnswers {
  private readonly answers = new Map<string, ApprovalAnswer>();
  private readonly waiters = new Set<() => void>();

  /** Records `answer` unless the call has one; returns the one kept. */
  offer(toolCallId: string, answer: ApprovalAnswer): { kept: ApprovalAnswer; first: boolean } {
    const existing = this.answers.get(toolCallId);
    if (existing !== undefined) return { kept: existing, first: false };
    this.answers.set(toolCallId, answer);
    for (const wake of [...this.waiters]) wake();
    return { kept: answer, first: true };
  }

  /** The answer given for a call, if any; forgotten once taken. */
  take(toolCallId: string): ApprovalAnswer | undefined {
    const answer = this.answers.get(toolCallId);
    if (answer !== undefined) this.answers.delete(toolCallId);
    return answer;
  }

  /** Resolves after `ms`, when an answer is offered, or when `signal` aborts. */
  wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

/** Calls every listener; a listener's failure must not break the run. */
export function emit(listeners: readonly EventListener[], event: SessionEvent): void {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch {
      // A listener's failure must not break the run.
    }
  }
}

/** Appends a record when possible: a trace that cannot be written (disk full) must not hide the run's outcome. */
export function safeAppend(state: State, record: Parameters<State['append']>[0]): void {
  try {
    state.append(record);
  } catch {
    // The outcome is still returned to the caller.
  }
}

/** The last system prompt each redactor redacted: a prompt is scanned once, not at every turn. */
const redactedPrompts = new WeakMap<SecretRedactor, { prompt: string; redacted: string }>();

/** The system prompt as the model gets it: with the known secrets of `redactor` replaced. */
export function modelSystemPrompt(prompt: string, redactor: SecretRedactor | undefined): string {
  if (redactor === undefined) return prompt;
  const cached = redactedPrompts.get(redactor);
  if (cached !== undefined && cached.prompt === prompt) return cached.redacted;
  const redacted = redactor.text(prompt);
  redactedPrompts.set(redactor, { prompt, redacted });
  return redacted;
}
