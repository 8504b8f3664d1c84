import type { IncomingMessage, ServerResponse } from 'node:http';
import { ACTIVE_SESSION_STATUSES, checkApprovalAnswer, ConfigError, RhoError } from '@rho/core';
import type { ApprovalAnswer, PendingApproval } from '@rho/core';
import type { ListedSession } from '@rho/monitor';
import { collectWaitingApprovals, WAITING_STATUSES } from '@rho/monitor';
import type { DashboardApprovalResult, DashboardSource } from '../dashboard-source.js';
import { changeAllowed } from './change-guard.js';
import { BODY_LIMIT, readJsonBody, sendJson } from './http.js';

/** A waiting call as `GET /api/approvals` lists it: the call, and the session it waits in. */
export type WaitingApproval = PendingApproval & {
  sessionId: string;
  /** `waiting_approval` (a process waits for the answer) or `parked` (none: resume after answering). */
  sessionStatus: string;
  /** The session's first prompt (at most 200 characters), to tell sessions apart. */
  firstPrompt?: string;
};

/** Sessions of each waiting status looked at by `GET /api/approvals`. */
const WAITING_SESSIONS = 1000;
/** Statuses whose run is in progress (an answer is applied at once). */
const LIVE: ReadonlySet<string> = new Set(ACTIVE_SESSION_STATUSES);
/** A string argument longer than this is sent cut, with a note (a `write` of a large file). */
const ARGUMENT_KEEP = 16 * 1024;
const FIELDS = new Set(['toolCallId', 'decision', 'scope', 'reason']);
const SHAPE =
  '{"toolCallId": "...", "decision": "approve" | "deny", "scope"?: "once" | "call" | "tool", "reason"?: "..."}';

/** `GET /api/approvals`: every call that waits, in every session that waits, oldest first. */
export async function listApprovals(response: ServerResponse, source: DashboardSource): Promise<void> {
  const approvals: WaitingApproval[] = [];
  if (source.pendingApprovals !== undefined) {
    const sessions: ListedSession[] = [];
    for (const status of WAITING_STATUSES)
      sessions.push(...(await source.listSessions({ status, tree: false, limit: WAITING_SESSIONS })).rows);
    const waiting = await collectWaitingApprovals(sessions, source.pendingApprovals.bind(source));
    if (waiting.unreadable.length > 0)
      throw new Error(
        `The trace of session ${waiting.unreadable[0]!.sessionId} cannot be read: ${waiting.unreadable[0]!.reason}`,
      );
    for (const { session, ...call } of waiting.calls)
      approvals.push({
        ...shown(call),
        sessionId: session.id,
        sessionStatus: session.status,
        ...(session.firstPrompt === undefined ? {} : { firstPrompt: session.firstPrompt.slice(0, 200) }),
      });
  }
  sendJson(response, 200, { approvals, answerable: source.answerApproval !== undefined });
}

/** `GET /api/sessions/:id/approvals`: the session's waiting calls, oldest first. */
export async function listSessionApprovals(
  response: ServerResponse,
  id: string,
  source: DashboardSource,
): Promise<void> {
  const session = await source.getSession(id);
  if (session === undefined) {
    sendJson(response, 404, { error: `No session ${id}.` });
    return;
  }
  const pending = source.pendingApprovals === undefined ? [] : await source.pendingApprovals(id);
  sendJson(response, 200, {
    status: session.status,
    approvals: pending.map(shown),
    answerable: source.answerApproval !== undefined,
  });
}

/**
 * `POST /api/sessions/:id/approvals` `{toolCallId, decision, scope?, reason?}`: answers a waiting
 * call exactly once, as the dashboard (`by` and `source` are `dashboard`), with the same checks as
 * a control request (token header, origin, JSON). 200 with the answer applied; 400 (413) for a bad
 * body, saying what is wrong; 404 for no such session; 409 when the call does not wait, or was
 * answered already (saying which answer stands) or, on a fleet, the session is not live; 501 when
 * the source cannot answer approvals.
 */
export async function answerApproval(
  request: IncomingMessage,
  response: ServerResponse,
  id: string,
  source: DashboardSource,
  token: string,
): Promise<void> {
  if (!changeAllowed(request, response, token, 'approval answer')) return;
  const body = await readJsonBody(request);
  if (!body.ok) {
    if (body.problem === 'too_large')
      sendJson(response, 413, { error: `The body is larger than ${BODY_LIMIT / 1024} KiB: send ${SHAPE}.` });
    else sendJson(response, 400, { error: `The body is not JSON: send ${SHAPE}.` });
    return;
  }
  const parsed = parseAnswer(body.value);
  if (typeof parsed === 'string') {
    sendJson(response, 400, { error: parsed });
    return;
  }
  const { toolCallId, answer } = parsed;
  const session = await source.getSession(id);
  if (session === undefined) {
    sendJson(response, 404, { error: `No session ${id}.` });
    return;
  }
  if (source.pendingApprovals === undefined || source.answerApproval === undefined) {
    sendJson(response, 501, {
      error: `This dashboard's source (${source.description}) cannot answer approvals: answer with rho approve or rho deny.`,
    });
    return;
  }
  const call = (await source.pendingApprovals(id)).find((pending) => pending.toolCallId === toolCallId);
  let result: DashboardApprovalResult;
  try {
    result = await source.answerApproval(id, toolCallId, answer);
  } catch (error) {
    // A fleet takes answers for live sessions only; a channel may carry none.
    if (RhoError.isInstance(error) && error.code === 'fleet_signal_refused')
      sendJson(response, 409, { error: error.message, code: error.code });
    else if (RhoError.isInstance(error) && error.code === 'approval_unsupported')
      sendJson(response, 501, { error: error.message, code: error.code });
    else throw error;
    return;
  }
  if (result.outcome === 'answered') {
    sendJson(response, 200, {
      outcome: 'answered',
      answer: result.answer,
      message: answeredMessage(id, session.status, toolCallId, call, result.answer),
    });
    return;
  }
  const standing = result.outcome === 'already_answered' ? result.answer : result.answered;
  if (standing !== undefined) {
    sendJson(response, 409, {
      outcome: 'already_answered',
      answer: standing,
      error: `Call ${toolCallId} was already answered (${describe(standing)}); that answer stands and yours was not recorded.`,
    });
    return;
  }
  const waiting = result.outcome === 'not_pending' ? result.waiting : [];
  sendJson(response, 409, {
    outcome: 'not_pending',
    waiting,
    error: `Call ${toolCallId} does not wait for approval in session ${id} (${waiting.length === 0 ? 'no call waits' : `waiting: ${waiting.join(', ')}`}); nothing was recorded.`,
  });
}

/** The answer a body asks for, or what is wrong with it. */
function parseAnswer(value: unknown): { toolCallId: string; answer: ApprovalAnswer } | string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `The body is an object ${SHAPE}.`;
  const input = value as Record<string, unknown>;
  const unknown = Object.keys(input).filter((key) => !FIELDS.has(key));
  if (unknown.length > 0)
    return `Unknown field${unknown.length === 1 ? '' : 's'} ${unknown.map((key) => JSON.stringify(key)).join(', ')}: the body has toolCallId, decision, scope and reason (the dashboard records itself as who answered).`;
  const { toolCallId, decision, scope, reason } = input;
  if (typeof toolCallId !== 'string' || toolCallId === '')
    return 'toolCallId is the id of the waiting call (a string), as GET /api/sessions/:id/approvals lists it.';
  // The answer's own checks are core's, as for rho approve and answer files (one decision).
  try {
    return {
      toolCallId,
      answer: checkApprovalAnswer({
        decision,
        ...(scope === undefined ? {} : { scope }),
        ...(reason === undefined ? {} : { reason }),
        by: 'dashboard',
        source: 'dashboard',
      }),
    };
  } catch (error) {
    if (ConfigError.isInstance(error)) return error.message;
    throw error;
  }
}

function answeredMessage(
  id: string,
  status: string,
  toolCallId: string,
  call: PendingApproval | undefined,
  answer: ApprovalAnswer,
): string {
  const what = call === undefined ? `call ${toolCallId}` : `${call.toolName} (call ${toolCallId})`;
  const reach =
    answer.scope === 'tool'
      ? ` and every later ${call?.toolName ?? 'call of the tool'} that matches no dangerous pattern`
      : answer.scope === 'call'
        ? ' and this exact call for the rest of the session'
        : '';
  const later = LIVE.has(status)
    ? ''
    : `; the session is not running (${status}): continue it with rho --resume ${id} to apply the answer`;
  return `${answer.decision === 'approve' ? 'Approved' : 'Denied'} ${what} in ${id}${reach}${later}.`;
}

/** `approve by ana@laptop`, `deny by dashboard: use make dist-clean`. */
function describe(answer: ApprovalAnswer): string {
  const scope = answer.scope === undefined || answer.scope === 'once' ? '' : ` (scope ${answer.scope})`;
  const by = answer.by === undefined ? '' : ` by ${answer.by}`;
  return `${answer.decision}${scope}${by}${answer.reason === undefined ? '' : `: ${answer.reason}`}`;
}

/** A waiting call as the API sends it: string arguments longer than {@link ARGUMENT_KEEP} cut, with a note. */
function shown(call: PendingApproval): PendingApproval {
  const cut = (value: unknown): unknown => {
    if (typeof value === 'string')
      return value.length > ARGUMENT_KEEP
        ? `${value.slice(0, ARGUMENT_KEEP)}\n[... ${value.length - ARGUMENT_KEEP} more characters not sent to the dashboard: see the trace file]`
        : value;
    if (Array.isArray(value)) return value.map(cut);
    if (typeof value === 'object' && value !== null)
      return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, cut(inner)]));
    return value;
  };
  return { ...call, arguments: cut(call.arguments) };
}
