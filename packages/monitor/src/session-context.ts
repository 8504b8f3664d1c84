import { dirname } from 'node:path';
import { SessionNotFoundError, SessionStore } from '@rho/core';
import type { ChatMessage } from '@rho/core';
import type { LivenessOptions } from './live-status.js';
import { readMonitoredSession } from './list-sessions.js';

/** What one agent knows, exported from its trace for a coordinator. */
export interface SessionContext {
  /** Session id. */
  id: string;
  /** Session directory. */
  directory: string;
  /** Live status when the context was taken. */
  status: string;
  /** The model the agent runs. */
  model?: string;
  /** The task the agent was given. */
  task?: string;
  /** Its conversation as plain text: the task, its messages, tool calls and (shortened) results. */
  transcript: string;
  /** How many messages the transcript was made from. */
  messageCount: number;
  /** Whether older parts were left out to respect `maxChars`. */
  truncated: boolean;
}

/** Options of {@link readSessionContext}. */
export interface SessionContextOptions {
  /** Upper bound of the transcript's length (default 40,000 characters); the task and the newest messages are kept. */
  maxChars?: number;
  /** Tool results longer than this are shortened (default 2,000 characters). */
  maxToolResultChars?: number;
  /** Liveness thresholds for the reported status. */
  liveness?: LivenessOptions;
}

/**
 * Exports what an agent knows by replaying its trace (the same replay `rho --resume` uses, so
 * compactions are applied and the result is what the model itself sees). This needs no
 * cooperation from the agent: it works while the agent is busy in a long tool call, paused,
 * waiting for approval, or dead, and it cannot be lost or delayed the way a request to the agent
 * could.
 */
export function readSessionContext(directory: string, options: SessionContextOptions = {}): SessionContext {
  const session = readMonitoredSession(directory, options.liveness ?? {});
  if (session === undefined)
    throw new SessionNotFoundError({
      message: `${directory} is not a session directory (no meta.json or trace.jsonl).`,
    });
  const state = new SessionStore(dirname(directory)).loadState(directory);
  const maxToolResultChars = options.maxToolResultChars ?? 2_000;
  const entries = state.messages
    .filter((message) => message.role !== 'system')
    .map((message) => describeMessage(message, maxToolResultChars));
  const maxChars = options.maxChars ?? 40_000;
  let truncated = false;
  let transcript = entries.join('\n\n');
  if (transcript.length > maxChars) {
    truncated = true;
    // Keep the first entry (the task) and as many of the newest as fit.
    const first = entries[0] ?? '';
    const kept: string[] = [];
    let length = first.length + 100;
    for (let index = entries.length - 1; index > 0; index -= 1) {
      const entry = entries[index]!;
      if (length + entry.length + 2 > maxChars) break;
      kept.unshift(entry);
      length += entry.length + 2;
    }
    const omitted = entries.length - 1 - kept.length;
    transcript = [first.slice(0, maxChars / 2), `[... ${omitted} older messages left out ...]`, ...kept].join('\n\n');
  }
  return {
    id: session.id,
    directory,
    status: session.status,
    ...(session.model === undefined ? {} : { model: session.model }),
    ...(session.firstPrompt === undefined ? {} : { task: session.firstPrompt }),
    transcript,
    messageCount: entries.length,
    truncated,
  };
}

function describeMessage(message: ChatMessage, maxToolResultChars: number): string {
  switch (message.role) {
    case 'user':
      return `USER: ${message.content}`;
    case 'assistant': {
      const parts: string[] = [];
      if (message.content !== null && message.content !== '') parts.push(`ASSISTANT: ${message.content}`);
      for (const call of message.tool_calls ?? [])
        parts.push(`ASSISTANT called ${call.function.name}(${call.function.arguments})`);
      return parts.length === 0 ? 'ASSISTANT: (no text)' : parts.join('\n');
    }
    case 'tool': {
      const text =
        message.content.length > maxToolResultChars
          ? `${message.content.slice(0, maxToolResultChars)}\n[... ${message.content.length - maxToolResultChars} more characters]`
          : message.content;
      return `TOOL RESULT (${message.tool_call_id}):\n${text}`;
    }
    case 'system':
      return `SYSTEM: ${message.content}`;
    default: {
      const unknown: never = message;
      return String(unknown);
    }
  }
}
