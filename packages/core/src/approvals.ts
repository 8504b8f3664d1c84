import { createHash, randomUUID } from 'node:crypto';
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, SessionWriteError } from './errors.js';
import { timestamp } from './events.js';

/** What a person (or a timeout) answered to a tool call that waits for approval. */
export interface ApprovalAnswer {
  /** `approve` runs the call; `deny` ends it, and the model reads the reason. */
  decision: 'approve' | 'deny';
  /**
   * How far an approval reaches: `once` (this call, the default), `call` (this exact call, same
   * tool and arguments, for the rest of the session), `tool` (every call of the tool for the rest
   * of the session, except calls that match a dangerous pattern, which still ask).
   */
  scope?: 'once' | 'call' | 'tool';
  /** Why it was denied (the model reads it), or a note with an approval. */
  reason?: string;
  /** Who answered: `user@host`, `dashboard`, an application's name. */
  by?: string;
  /** Where the answer came from: `operator` (the default), `timeout`, `dashboard`, `library`. */
  source?: string;
  /** When it was answered (UTC ISO-8601); set when it is recorded. */
  at?: string;
}

/** A tool call that waits for an answer, as `rho approve`, the dashboard and the library list it. */
export interface PendingApproval {
  /** The model's id for the call: what an answer names. */
  toolCallId: string;
  toolName: string;
  arguments: unknown;
  /** The rule and risk line: why the profile asks. */
  reason?: string;
  /** The dangerous pattern the call matched, if any. */
  dangerous?: string;
  /** When the call started waiting (UTC ISO-8601). */
  requestedAt: string;
  /** When the wait times out, when it is bounded. */
  expiresAt?: string;
  /** What a timeout answers. */
  onTimeout?: 'deny' | 'approve';
}

/** How an answer was taken: `answered` (this answer is the one applied), or the answer that won before it. */
export type AnswerOutcome =
  { outcome: 'answered'; answer: ApprovalAnswer } | { outcome: 'already_answered'; answer: ApprovalAnswer };

/** Where a session directory keeps the answers to its waiting tool calls, one file per call. */
export const APPROVALS_DIRECTORY = 'approvals';

/** Longest reason kept with an answer (the model reads it). */
export const APPROVAL_REASON_LIMIT = 2000;

/** The file of a call's answer: a hash of the model's call id (ids are the model's and may hold any character). */
export function approvalFilePath(directory: string, toolCallId: string): string {
  const name = createHash('sha256').update(toolCallId).digest('hex').slice(0, 40);
  return join(directory, APPROVALS_DIRECTORY, `${name}.json`);
}

/**
 * Checks an answer from outside (a command line, a request body, a file) and returns it in its
 * recorded form; throws a {@link ConfigError} that says what to fix.
 */
export function checkApprovalAnswer(value: unknown): ApprovalAnswer {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ConfigError({
      message: 'An approval answer is an object {"decision": "approve" | "deny", ...}.',
      code: 'approval_answer_invalid',
    });
  const input = value as Record<string, unknown>;
  if (input.decision !== 'approve' && input.decision !== 'deny')
    throw new ConfigError({
      message: `An approval answer's decision is "approve" or "deny", not ${JSON.stringify(input.decision)}.`,
      code: 'approval_answer_invalid',
      field: 'decision',
    });
  const scope = input.scope ?? 'once';
  if (scope !== 'once' && scope !== 'call' && scope !== 'tool')
    throw new ConfigError({
      message: `An approval answer's scope is "once", "call" or "tool", not ${JSON.stringify(scope)}.`,
      code: 'approval_answer_invalid',
      field: 'scope',
    });
  if (input.decision === 'deny' && scope !== 'once')
    throw new ConfigError({
      message:
        'A denial applies to this call only: give no scope (always-this-call and always-tool are for approvals).',
      code: 'approval_answer_invalid',
      field: 'scope',
    });
  for (const field of ['reason', 'by', 'source', 'at'] as const)
    if (input[field] !== undefined && typeof input[field] !== 'string')
      throw new ConfigError({
        message: `An approval answer's ${field} is a string.`,
        code: 'approval_answer_invalid',
        field,
      });
  const reason = typeof input.reason === 'string' ? input.reason.slice(0, APPROVAL_REASON_LIMIT) : undefined;
  return {
    decision: input.decision,
    scope,
    ...(reason === undefined || reason.trim() === '' ? {} : { reason }),
    ...(typeof input.by === 'string' ? { by: input.by.slice(0, 200) } : {}),
    source: typeof input.source === 'string' ? input.source.slice(0, 100) : 'operator',
    at: typeof input.at === 'string' ? input.at : timestamp(),
  };
}

/**
 * Records the answer to a waiting call in a session directory, exactly once: the answer is
 * written whole to a file of its own and linked into place under the call's name, which fails
 * when another answer is there already (two answers racing: one wins, the other is told which
 * won). Used by operators (`rho approve`, the dashboard) and by the agent itself for a timeout,
 * so a timeout and a person answering at the same moment also settle on one answer.
 */
export function claimApprovalAnswer(directory: string, toolCallId: string, answer: ApprovalAnswer): AnswerOutcome {
  const checked = checkApprovalAnswer(answer);
  const path = approvalFilePath(directory, toolCallId);
  const folder = join(directory, APPROVALS_DIRECTORY);
  mkdirSync(folder, { recursive: true });
  const temporary = join(folder, `.${randomUUID()}.tmp`);
  const body = Buffer.from(`${JSON.stringify({ tool_call_id: toolCallId, ...checked })}\n`, 'utf8');
  try {
    const fd = openSync(temporary, 'wx');
    try {
      if (writeSync(fd, body) !== body.length)
        throw new SessionWriteError({
          message: `The answer could not be written whole to ${temporary}: the disk is probably full. Nothing was answered; free disk space and answer again.`,
          path: temporary,
          errno: 'ENOSPC',
        });
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temporary, path);
      return { outcome: 'answered', answer: checked };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const existing = readApprovalAnswer(directory, toolCallId);
      return { outcome: 'already_answered', answer: existing ?? checked };
    }
  } catch (error) {
    if (SessionWriteError.isInstance(error)) throw error;
    throw SessionWriteError.from(path, error, 'Nothing was answered; fix the cause and answer again.');
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** The answer recorded for a call in a session directory, if any (an unreadable file counts as none yet). */
export function readApprovalAnswer(directory: string, toolCallId: string): ApprovalAnswer | undefined {
  let text: string;
  try {
    text = readFileSync(approvalFilePath(directory, toolCallId), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    if (value.tool_call_id !== toolCallId) return undefined;
    return checkApprovalAnswer(value);
  } catch {
    return undefined;
  }
}

/** The identity of a call for "always this exact call": the tool and its arguments, key order ignored. */
export function approvalCallKey(toolName: string, args: unknown): string {
  return `${toolName}\u0000${stableJson(args)}`;
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What the session remembers of "always" answers (rebuilt from the trace on resume). */
export interface ApprovalGrants {
  /** Tools approved for every call that matches no dangerous pattern. */
  tools: Set<string>;
  /** Exact calls approved ({@link approvalCallKey}). */
  calls: Set<string>;
}

/** Whether remembered "always" answers approve this call (a dangerous call is approved only as that exact call). */
export function grantsApprove(
  grants: ApprovalGrants,
  call: { toolName: string; arguments: unknown; dangerous?: string | undefined },
): boolean {
  if (grants.calls.has(approvalCallKey(call.toolName, call.arguments))) return true;
  return call.dangerous === undefined && grants.tools.has(call.toolName);
}
