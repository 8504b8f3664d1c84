import { readTrace } from '@rho/core';
import type { ApprovalAnswer } from '@rho/core';
import type { ApprovalAnswerResult } from '@rho/monitor';
import type { DashboardApprovalResult } from '../dashboard-source.js';

/**
 * The answer a trace recorded last for a call (its last `approval_answered`), if any: the answer
 * that stands for a call that no longer waits.
 */
export function recordedAnswer(trace: string | Uint8Array, toolCallId: string): ApprovalAnswer | undefined {
  const { records } = readTrace(trace);
  for (let index = records.length - 1; index >= 0; index -= 1) {
    const record = records[index]!;
    if (record.type !== 'approval_answered' || record.tool_call_id !== toolCallId) continue;
    const text = (key: string) => (typeof record[key] === 'string' ? (record[key] as string) : undefined);
    const scope = text('scope');
    const reason = text('reason');
    const by = text('by');
    const source = text('source');
    return {
      decision: record.decision === 'approve' ? 'approve' : 'deny',
      ...(scope === 'once' || scope === 'call' || scope === 'tool' ? { scope } : {}),
      ...(reason === undefined ? {} : { reason }),
      ...(by === undefined ? {} : { by }),
      ...(source === undefined ? {} : { source }),
      ...(typeof record.ts === 'string' ? { at: record.ts } : {}),
    };
  }
  return undefined;
}

/**
 * A source's answer result, with the answer that stands for a call that no longer waits (read
 * from the trace, only then: `trace` is called for `not_pending` alone).
 */
export async function withRecordedAnswer(
  result: ApprovalAnswerResult,
  toolCallId: string,
  trace: () => Promise<string | Uint8Array>,
): Promise<DashboardApprovalResult> {
  if (result.outcome !== 'not_pending') return result;
  const answered = recordedAnswer(await trace(), toolCallId);
  return answered === undefined ? result : { ...result, answered };
}
