import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import type { ChatMessage, ModelClient } from '@rho/model-client';
import type { Agent } from '../../agent.js';
import type { ChildAgent, ChildSession, ChildSessions, SpawnChildOptions } from '../../child-sessions.js';
import type { UsageTotals } from '../../events.js';
import type { Approver, Budgets, SessionOptions } from '../../session-options.js';
import type { SecretRedactor } from '../../secret-redaction.js';
import { mergeSecretRedactors } from '../../secret-redaction.js';
import type { SessionObserver } from '../../session-observer.js';
import { readSessionMeta } from '../../session-meta.js';
import { SessionStore } from '../../session-store.js';
import { sessionSettingsDocument } from '../../settings/saved-settings.js';
import type { State } from '../../state.js';
import { tighterBudgets } from './budgets.js';

/** The parts of a running session its children are made from (a `Session` has them). */
export interface ParentSession {
  /** Becomes the child's `parent_id`. */
  readonly id: string;
  /** Copied (with `derive()`) for a child of the running agent. */
  readonly agent: Agent;
  /** Its messages seed a child with `copyHistory`. */
  readonly state: State;
  /** A child of the running agent gets a directory beside this one. */
  readonly directory: string | undefined;
  /** Its model is recorded in the child's meta.json. */
  readonly client: ModelClient;
  /** Read when the child is spawned: the child asks the same approver. */
  readonly approver: Approver | undefined;
  /** Options for each child (see `SessionOptions.childSessionOptions`), inherited by the child. */
  readonly childSessionOptions: SessionOptions['childSessionOptions'];
  /** What is left of the parent's budgets now. */
  remainingBudgets(): Budgets;
  /** Adds a child's usage to the parent's totals and trace. */
  recordChildUsage(childSessionId: string, usage: UsageTotals, model: string): void;
  /** Told of each child, and give it observers of its own. */
  readonly observers: readonly SessionObserver[];
  /** The parent's redactor: a child's records and results keep the same secrets out. */
  readonly redactor?: SecretRedactor | undefined;
}

/** The tool call a child is spawned for. */
export interface ChildOrigin {
  toolCallId: string;
  toolName: string;
}

/** The capability tools get as `ToolContext.children`, backed by `parent`, for the call `origin`. */
export function childSessionsOf(parent: ParentSession, origin?: ChildOrigin): ChildSessions {
  return {
    remainingBudgets: () => parent.remainingBudgets(),
    spawn: (options = {}) => observed(parent, spawnChild(parent, options), origin),
    recordUsage: (childSessionId, usage, model) => parent.recordChildUsage(childSessionId, usage, model),
  };
}

function spawnChild(parent: ParentSession, options: SpawnChildOptions): ChildSession {
  const copy = options.agent === undefined;
  if (!copy && options.withoutTools !== undefined) {
    throw new TypeError(
      'spawn(): withoutTools applies only to the copy of the running agent; give your own agent the tools it should have instead.',
    );
  }
  let agent: ChildAgent;
  if (copy) {
    const derived = parent.agent.derive();
    for (const name of options.withoutTools ?? []) derived.registry.unregister(name);
    agent = derived;
  } else {
    agent = options.agent!;
  }
  // A copy of the agent runs under the parent session's budgets, which is what is left of them.
  const budgets = tighterBudgets(copy ? {} : agent.budgets, parent.remainingBudgets());
  const place =
    copy && parent.directory !== undefined && options.session?.directory === undefined
      ? childDirectory(parent, parent.directory, options.session?.id)
      : undefined;
  // An app's per-child options (a fleet registration, say) need the child's id before it exists.
  const hook = parent.childSessionOptions;
  const redactor = mergeSecretRedactors(parent.redactor, options.session?.redactor);
  const id = hook === undefined ? undefined : (options.session?.id ?? place?.id ?? randomUUID());
  const child = agent.createSession({
    ...(place === undefined ? {} : place),
    ...(parent.approver === undefined ? {} : { approver: parent.approver }),
    budgets,
    ...(hook === undefined || id === undefined
      ? {}
      : {
          id,
          ...hook({ id, parentId: parent.id, directory: options.session?.directory ?? place?.directory }),
          childSessionOptions: hook,
        }),
    ...options.session,
    // What a child sees reaches the parent as its result: the parent's secrets are the child's too.
    ...(redactor === undefined ? {} : { redactor }),
  });
  if (options.copyHistory === true) {
    for (const message of historyWithoutPendingCalls(parent.state.messages)) child.state.addMessage(message);
  }
  return child;
}

/** Gives the child the observers the parent's observers ask for, before it runs. */
function observed(parent: ParentSession, child: ChildSession, origin: ChildOrigin | undefined): ChildSession {
  if (child.observe === undefined) return child;
  for (const observer of parent.observers) {
    let childObserver: SessionObserver | undefined;
    try {
      childObserver = observer.onChildSession?.({
        session: child,
        parentSessionId: parent.id,
        ...(origin === undefined ? {} : { toolCallId: origin.toolCallId, toolName: origin.toolName }),
      });
    } catch {
      // An observer's failure must not break the tool call.
    }
    if (childObserver !== undefined) child.observe(childObserver);
  }
  return child;
}

/** A new session directory beside the parent's, with the parent's configuration and `parent_id`. */
function childDirectory(
  parent: ParentSession,
  directory: string,
  id: string | undefined,
): { id: string; directory: string } {
  const meta = readSessionMeta(directory);
  return new SessionStore(dirname(directory)).create({
    ...(id === undefined ? {} : { id }),
    // The parent's saved settings, redacted as saved (its secrets.json is not copied).
    config: sessionSettingsDocument(directory),
    parentId: parent.id,
    model: parent.client.model,
    workingDir: parent.agent.workingDir,
    ...(meta?.profile === undefined ? {} : { profile: meta.profile }),
  });
}

/** The parent's history without its last assistant message if that message's calls are still running. */
function historyWithoutPendingCalls(messages: readonly ChatMessage[]): ChatMessage[] {
  const copy = structuredClone([...messages]);
  for (let index = copy.length - 1; index >= 0; index -= 1) {
    const message = copy[index]!;
    if (message.role === 'assistant' && message.tool_calls !== undefined) {
      const answered = new Set(
        copy.slice(index + 1).flatMap((item) => (item.role === 'tool' ? [item.tool_call_id] : [])),
      );
      if (message.tool_calls.some((call) => !answered.has(call.id))) return copy.slice(0, index);
      break;
    }
  }
  return copy;
}
