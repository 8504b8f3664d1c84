import type { ChildSession } from './child-sessions.js';
import type { SessionEvent } from './events.js';

/** A child session, as the observers of the session that started it are told of it. */
export interface ObservedChildSession {
  /** The child session, not yet run. */
  session: ChildSession;
  /** The id of the session whose tool call started the child. */
  parentSessionId: string;
  /** The tool call that started the child (absent when started outside a tool call). */
  toolCallId?: string;
  /** The name of that tool: `delegate`, or the name of an agent tool. */
  toolName?: string;
}

/**
 * Watches a session from outside: every event of its runs, as `onEvent` gets them, and the child
 * sessions its tool calls start (delegate, agent tools), so that a tracer can nest a child's run
 * under the call that started it. Attach one with `session.observe()`; core knows nothing of what
 * an observer does with the events (`@rho/otel` turns them into OpenTelemetry spans). An observer
 * that throws never breaks the run.
 */
export interface SessionObserver {
  /** Every event of every run of the session: trace records and transient text deltas. */
  onEvent(event: SessionEvent): void;
  /**
   * A tool call of the session started a child session. Returns the observer of the child's
   * events (attached before the child runs, and told of the child's own children), or nothing to
   * leave the child unobserved. Called only for children that can be observed (a `Session` can).
   */
  onChildSession?(child: ObservedChildSession): SessionObserver | undefined;
}
