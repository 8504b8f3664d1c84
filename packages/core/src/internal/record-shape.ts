import type { RawTraceRecord } from '../trace-reader.js';

/**
 * Why a record of a known type has a shape consumers cannot use (a message whose `tool_calls`
 * holds `null`, a tool result without `tool_call_id`, a compaction keeping a non-message), or
 * undefined when it is usable. Only what would make a consumer fail or guess is checked; fields
 * that consumers read defensively (numbers, texts) are not.
 */
export function recordShapeProblem(record: RawTraceRecord): string | undefined {
  if (record.type === 'message') return messageProblem(record);
  if (record.type === 'approval_requested' || record.type === 'approval_answered') {
    if (typeof record.tool_call_id !== 'string' || record.tool_call_id === '') return 'has no tool_call_id';
    if (typeof record.tool_name !== 'string') return 'has no tool_name';
    if (record.type === 'approval_answered' && record.decision !== 'approve' && record.decision !== 'deny')
      return 'decision is neither approve nor deny';
  }
  if (record.type === 'compact' && record.kept !== undefined) {
    if (!Array.isArray(record.kept)) return 'kept is not a list of messages';
    for (let index = 0; index < record.kept.length; index += 1) {
      const item: unknown = record.kept[index];
      const reason =
        typeof item === 'object' && item !== null && !Array.isArray(item)
          ? messageProblem(item as Record<string, unknown>)
          : 'is not an object';
      if (reason !== undefined) return `kept[${index}] ${reason}`;
    }
  }
  return undefined;
}

function messageProblem(value: Record<string, unknown>): string | undefined {
  if (typeof value.role !== 'string') return 'has no role';
  if (value.tool_calls !== undefined && value.tool_calls !== null) {
    const calls: unknown = value.tool_calls;
    if (!Array.isArray(calls)) return 'tool_calls is not a list';
    // Indexed, not entries(): this runs for every message of every trace read.
    for (let index = 0; index < calls.length; index += 1) {
      const call: unknown = calls[index];
      if (typeof call !== 'object' || call === null) return `tool_calls[${index}] is not an object`;
      const { id, function: fn } = call as { id?: unknown; function?: unknown };
      if (typeof id !== 'string' || id === '') return `tool_calls[${index}] has no id`;
      if (typeof fn !== 'object' || fn === null || typeof (fn as { name?: unknown }).name !== 'string')
        return `tool_calls[${index}] has no function name`;
    }
  }
  if (value.role === 'tool' && (typeof value.tool_call_id !== 'string' || value.tool_call_id === ''))
    return 'is a tool result without tool_call_id';
  return undefined;
}
