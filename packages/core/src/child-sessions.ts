import type { UsageTotals } from './events.js';
import type { Budgets, RunOptions, RunResult, SessionOptions } from './session-options.js';
import type { SessionObserver } from './session-observer.js';
import type { State } from './state.js';

/**
 * A session started by a tool, as the tool sees it: enough to run it and account for it. A
 * `Session` is one.
 */
export interface ChildSession {
  /** The child's session id (its directory name when it has one). */
  readonly id: string;
  /** The child's model client; its `model` names the model its usage is recorded under. */
  readonly client: { readonly model: string };
  /** The child's conversation, for example to seed it before the run. */
  readonly state: State;
  /** Runs one task in the child; never throws for run failures (see `Session.run`). */
  run(task: string, options?: RunOptions): Promise<RunResult>;
  /**
   * Attaches an observer to the child's runs (optional: a child without it is not observed by the
   * parent's observers). Returns a function that detaches it.
   */
  observe?(observer: SessionObserver): () => void;
}

/** Something that makes sessions, with default budgets: an `Agent` is one. */
export interface ChildAgent {
  /** The agent's own budgets; a child keeps them unless the running session has less left. */
  readonly budgets: Budgets;
  /** A new session of this agent. */
  createSession(options?: SessionOptions): ChildSession;
}

/** Options of {@link ChildSessions.spawn}. */
export interface SpawnChildOptions {
  /**
   * The agent that runs the child. Default: a copy of the running session's agent (same system
   * prompt, model, tools, working directory, backend), whose budgets are the running session's.
   */
  agent?: ChildAgent;
  /** Names of tools the copied agent leaves out (only with the default agent), for example `delegate`. */
  withoutTools?: readonly string[];
  /** Gives the child a copy of the running session's conversation so far, without the calls still in progress. */
  copyHistory?: boolean;
  /** Session options applied last (they win over the approver and budgets chosen here). */
  session?: SessionOptions;
}

/**
 * What a tool may do with the session running it: start child sessions that ask the same
 * approver and stay within what is left of its budgets, and add their usage to its totals. This is
 * all the delegate and agent-as-tool tools use; a third-party tool gets the same.
 */
export interface ChildSessions {
  /**
   * What is left of the running session's budgets now: tokens and cost left, time left of the
   * current run, and the same turn limit per run. Keys without a limit are absent.
   */
  remainingBudgets(): Budgets;
  /**
   * A new child session, not yet run. It asks the running session's approver, and its budgets
   * are, per limit, the smaller of the child agent's own and what is left of the running
   * session's. A copy of the running session's agent also gets its own session directory next to
   * the parent's, with `parent_id` (so the monitor shows it under its parent), when the parent
   * has a directory; another agent's child gets one only through `session.directory`. Run it
   * with the tool's `signal`, so cancelling the parent cancels the child, then call
   * {@link recordUsage}.
   */
  spawn(options?: SpawnChildOptions): ChildSession;
  /**
   * Adds a child's usage to the running session's totals and trace (an `llm_end` record with
   * purpose `child_session`), so it shows in the session's cost and counts against its budgets.
   */
  recordUsage(childSessionId: string, usage: UsageTotals, model: string): void;
}
