import type { ApprovalAnswer } from '@rho/core';

/** A row of `approval_answers` as the channels read it. */
export interface ApprovalRow {
  decision: string;
  scope: string;
  reason: string | null;
  answered_by: string | null;
  source: string;
  answered_at: Date | string;
}

/** The answer a row of `approval_answers` holds (or the jsonb `answer_approval` returns). */
export function answerFromRow(row: ApprovalRow): ApprovalAnswer {
  return {
    decision: row.decision === 'approve' ? 'approve' : 'deny',
    scope: row.scope === 'call' || row.scope === 'tool' ? row.scope : 'once',
    ...(row.reason === null || row.reason === undefined ? {} : { reason: row.reason }),
    ...(row.answered_by === null || row.answered_by === undefined ? {} : { by: row.answered_by }),
    source: row.source,
    at: new Date(row.answered_at).toISOString(),
  };
}

/** The jsonb of `answer_approval` ({decision, scope, reason, by, source, at}) as an answer. */
export function answerFromJson(value: Record<string, unknown>): ApprovalAnswer {
  return answerFromRow({
    decision: String(value.decision),
    scope: String(value.scope ?? 'once'),
    reason: typeof value.reason === 'string' ? value.reason : null,
    answered_by: typeof value.by === 'string' ? value.by : null,
    source: typeof value.source === 'string' ? value.source : 'operator',
    answered_at: typeof value.at === 'string' ? value.at : new Date().toISOString(),
  });
}
