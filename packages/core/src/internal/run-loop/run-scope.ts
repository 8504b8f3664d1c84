import type { ModelClient } from '@rho/model-client';
import type { Agent } from '../../agent.js';
import type { ChildSessions } from '../../child-sessions.js';
import type { ContextWindowResolver } from '../../context-window-resolver.js';
import type { SessionEvent } from '../../events.js';
import type { SecretRedactor } from '../../secret-redaction.js';
import type { Approver } from '../../session-options.js';
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
