import type { ToolHookCall, TraceRecord } from '@rho/core';
import type { NotificationEvent } from './config.js';

/** What every hook's JSON holds. */
export interface HookPayloadBase {
  /** The event (`session_end`, `pre_tool`, ...). */
  event: string;
  session_id: string;
  /** When it happened (UTC ISO-8601). */
  ts: string;
  /** One line for people: a chat message or a desktop notification (`{"text": ...}` is what Slack's webhooks read). */
  text: string;
}

/** A notification hook's JSON: the common fields, the event's own, and the trace record that marked it. */
export interface NotificationPayload extends HookPayloadBase {
  event: NotificationEvent;
  /** The trace record (`run_end`, `approval_requested`, `error`, `directive`), as written to trace.jsonl. */
  record: TraceRecord;
  [field: string]: unknown;
}

/** The JSON of a `pre_tool` hook (and, with `result`, of a `post_tool` hook). */
export interface ToolPayload extends HookPayloadBase {
  event: 'pre_tool' | 'post_tool';
  tool_call_id: string;
  tool_name: string;
  arguments: Record<string, unknown>;
  /** What the profile decided: whether the call needs approval, why, and the dangerous pattern it matched. */
  approval: { required: boolean; reason?: string; dangerous?: string };
  /** For `post_tool`: the result the model reads. */
  result?: { success: boolean; content: string; duration_ms: number };
}

/**
 * The notification events a trace record marks, each with its JSON: `run_end` is `session_end`
 * (and `budget_reached` when its status is `limit`), `approval_requested` is `waiting_approval`,
 * `error` is `error`, `directive` is `directive_received`.
 */
export function notificationsOf(
  record: TraceRecord,
  sessionId: string,
): { event: NotificationEvent; payload: NotificationPayload }[] {
  const base = { session_id: sessionId, ts: record.ts, record };
  const who = `rho session ${sessionId}`;
  switch (record.type) {
    case 'run_end': {
      const usage = record.usage === undefined ? {} : { usage: record.usage };
      const limit = record.limit === undefined ? {} : { limit: record.limit };
      const ended: NotificationPayload = {
        event: 'session_end',
        ...base,
        text: `${who}: run ended, ${record.status}${record.limit === undefined ? '' : ` (${record.limit})`}`,
        status: record.status,
        ...limit,
        ...usage,
      };
      const events: { event: NotificationEvent; payload: NotificationPayload }[] = [
        { event: 'session_end', payload: ended },
      ];
      if (record.status === 'limit')
        events.push({
          event: 'budget_reached',
          payload: {
            event: 'budget_reached',
            ...base,
            text: `${who}: stopped at a limit, ${record.limit ?? 'unknown'}`,
            limit: record.limit ?? 'unknown',
            ...usage,
          },
        });
      return events;
    }
    case 'approval_requested':
      return [
        {
          event: 'waiting_approval',
          payload: {
            event: 'waiting_approval',
            ...base,
            text: `${who}: waiting for approval of ${record.tool_name}${record.reason === undefined ? '' : ` (${record.reason})`}`,
            tool_call_id: record.tool_call_id,
            tool_name: record.tool_name,
            tool_args: record.tool_args,
            ...(record.reason === undefined ? {} : { reason: record.reason }),
            ...(record.dangerous === undefined ? {} : { dangerous: record.dangerous }),
            ...(record.expires_at === undefined ? {} : { expires_at: record.expires_at }),
          },
        },
      ];
    case 'error':
      return [
        {
          event: 'error',
          payload: {
            event: 'error',
            ...base,
            text: `${who}: error: ${firstLine(record.content)}`,
            message: record.content,
            ...(record.code === undefined ? {} : { code: record.code }),
          },
        },
      ];
    case 'directive':
      return [
        {
          event: 'directive_received',
          payload: {
            event: 'directive_received',
            ...base,
            text: `${who}: directive received: ${firstLine(record.text)}`,
            directive: record.text,
          },
        },
      ];
    default:
      return [];
  }
}

/** The JSON of a `pre_tool` or `post_tool` hook for a call. */
export function toolPayload(
  event: 'pre_tool' | 'post_tool',
  call: ToolHookCall,
  result?: { success: boolean; content: string; durationMs: number },
): ToolPayload {
  return {
    event,
    session_id: call.sessionId,
    ts: new Date().toISOString(),
    text:
      event === 'pre_tool'
        ? `rho session ${call.sessionId}: about to run ${call.toolName}`
        : `rho session ${call.sessionId}: ${call.toolName} ${result?.success === false ? 'failed' : 'ran'}`,
    tool_call_id: call.toolCallId,
    tool_name: call.toolName,
    arguments: call.arguments,
    approval: call.approval,
    ...(result === undefined
      ? {}
      : { result: { success: result.success, content: result.content, duration_ms: result.durationMs } }),
  };
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}
