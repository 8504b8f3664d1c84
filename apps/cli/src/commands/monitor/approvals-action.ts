// `rho approvals`: every tool call that waits for approval, on this machine or across a fleet, with
// what it would do, why it asks, how long it has waited and until when, and the exact commands
// that answer it.
import type { SessionSource, WaitingApproval } from '@rho/monitor';
import { listWaitingApprovals } from '@rho/monitor';
import { EXIT } from '../../exit-codes.js';
import { answerCommands, formatElapsed, toolSignature } from '../../format.js';
import { styles } from '../../terminal.js';
import type { MonitorIo } from './monitor-io.js';

/** Options of {@link approvalsAction}. */
export interface ApprovalsOptions {
  json: boolean;
  /** The current time in ms (tests). */
  now?: number;
}

/**
 * The host a call must be answered on, for a fleet's parked session: no process runs it, and the
 * fleet takes answers for live sessions only, so `rho approve` answers it in the session's
 * directory, on its node. Undefined when the answer may come from anywhere.
 */
function answerOnHost(source: SessionSource, call: WaitingApproval): string | undefined {
  return source.kind === 'fleet' && call.session.status === 'parked' ? (call.session.hostname ?? '?') : undefined;
}

/**
 * `approvals`: the waiting calls as blocks (session, call, tool, how long it has waited and until
 * when, the call, its risk line, whether it matched a dangerous pattern, the answering commands),
 * or a JSON array with `json`. Sessions whose trace cannot be read are named on stderr. Exit 0.
 */
export async function approvalsAction(
  source: SessionSource,
  options: ApprovalsOptions,
  io: MonitorIo,
): Promise<number> {
  const { calls, unreadable } = await listWaitingApprovals(source);
  const now = options.now ?? Date.now();
  for (const { sessionId, reason } of unreadable)
    io.err(`Warning: ${sessionId} waits for approval, but its trace cannot be read: ${reason}\n`);
  if (options.json) {
    io.out(`${JSON.stringify(calls.map((call) => callJson(source, call, now)))}\n`);
    return EXIT.completed;
  }
  const where = source.kind === 'fleet' ? 'in the fleet' : `in ${source.description}`;
  if (calls.length === 0) {
    io.out(`No tool call waits for approval ${where}.\n`);
    return EXIT.completed;
  }
  const style = styles(io.color);
  const blocks = calls.map((call) => {
    const { approve, deny } = answerCommands(call.session.id, call.toolCallId);
    const host = answerOnHost(source, call);
    const outcome = call.onTimeout === 'approve' && call.dangerous === undefined ? 'approved' : 'denied';
    const expires = expiresIn(call, now);
    const head = [
      style.bold(call.session.id),
      `call ${call.toolCallId}`,
      call.toolName,
      `waiting ${since(call.requestedAt, now)}`,
      expires === undefined ? 'no timeout' : `${expires} (${expires === 'timed out' ? '' : 'then '}${outcome})`,
      call.session.status === 'parked' ? style.yellow('parked') : call.session.status,
      ...(source.kind === 'fleet' ? [`on ${call.session.hostname ?? '?'}`] : []),
    ].join('  ');
    return [
      head,
      `  ${toolSignature(call.toolName, call.arguments, 200)}`,
      `  risk: ${call.reason ?? 'the profile asks for approval of this tool'}`,
      call.dangerous === undefined
        ? '  dangerous: no'
        : `  ${style.red('dangerous:')} matches "${call.dangerous}" (only a person approves it, for this call)`,
      ...(host === undefined
        ? []
        : [`  no process runs it and the fleet takes answers for live sessions only: answer it on ${host}`]),
      `  ${approve}`,
      `  ${deny}`,
    ].join('\n');
  });
  const count = `${calls.length} tool call${calls.length === 1 ? ' waits' : 's wait'} for approval ${where}`;
  io.out(`${count}:\n\n${blocks.join('\n\n')}\n`);
  return EXIT.completed;
}

/** One waiting call in `approvals --json`: snake_case, times as ISO-8601 and milliseconds. */
function callJson(source: SessionSource, call: WaitingApproval, now: number): Record<string, unknown> {
  const { approve, deny } = answerCommands(call.session.id, call.toolCallId);
  const expiresAt = call.expiresAt === undefined ? Number.NaN : Date.parse(call.expiresAt);
  return {
    session_id: call.session.id,
    call_id: call.toolCallId,
    tool: call.toolName,
    arguments: call.arguments ?? null,
    risk: call.reason ?? null,
    dangerous: call.dangerous !== undefined,
    dangerous_pattern: call.dangerous ?? null,
    status: call.session.status,
    host: call.session.hostname ?? null,
    requested_at: call.requestedAt,
    waiting_ms: Math.max(0, now - Date.parse(call.requestedAt)) || 0,
    expires_at: call.expiresAt ?? null,
    expires_in_ms: Number.isNaN(expiresAt) ? null : Math.max(0, expiresAt - now),
    on_timeout: call.expiresAt === undefined ? null : (call.onTimeout ?? 'deny'),
    approve_command: approve,
    deny_command: deny,
    answer_on_host: answerOnHost(source, call) ?? null,
  };
}

/** `5m02s` since an ISO time; `-` when it is not one. */
function since(iso: string, now: number): string {
  const at = Date.parse(iso);
  return Number.isNaN(at) ? '-' : formatElapsed(Math.max(0, now - at)).replace(/^\d+ms$/, '0s');
}

/** `expires in 55m00s`, `timed out` once past; undefined for a wait without a timeout. */
function expiresIn(call: WaitingApproval, now: number): string | undefined {
  if (call.expiresAt === undefined) return undefined;
  const at = Date.parse(call.expiresAt);
  if (Number.isNaN(at)) return undefined;
  if (at <= now) return 'timed out';
  return `expires in ${formatElapsed(at - now).replace(/^\d+ms$/, '0s')}`;
}
