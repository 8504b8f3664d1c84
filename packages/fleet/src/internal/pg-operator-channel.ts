import type { AnswerOutcome, ApprovalAnswer, ControlOutcome, OperatorChannel } from '@rho/core';
import { checkApprovalAnswer, ConfigError, SessionNotFoundError } from '@rho/core';
import type { Sql } from 'postgres';
import { FleetSignalRefusedError } from '../errors.js';
import { answerFromJson } from './approval-rows.js';

type SignalKind = 'cancel' | 'pause' | 'resume' | 'directive';

/**
 * The operators' side of a session's control channel on PostgreSQL. Each request is one call of
 * the schema's `send_signal` function, in one transaction and one round trip: it locks the
 * session's registry row (so concurrent requests are serialized and exactly one sees
 * `requested`), refuses a session that has finished or is dead, sets the flag, appends the signal
 * with the session's next signal number, and notifies the agent (NOTIFY is delivered at commit,
 * so the agent never reads a signal that was rolled back). Answers to waiting tool calls go
 * through `answer_approval` the same way: refused for a session that is not live, the first
 * answer of a call recorded (the table's primary key decides between nodes racing), the agent
 * notified, a later answer told which won.
 */
export class PgOperatorChannel implements OperatorChannel {
  constructor(
    private readonly sql: Sql,
    readonly sessionId: string,
    private readonly channel: string,
  ) {}

  requestCancel(): Promise<ControlOutcome> {
    return this.send('cancel');
  }

  requestPause(): Promise<ControlOutcome> {
    return this.send('pause');
  }

  requestResume(): Promise<ControlOutcome> {
    return this.send('resume');
  }

  async sendDirective(text: string): Promise<void> {
    if (typeof text !== 'string' || text.trim() === '')
      throw new ConfigError({
        message: 'The directive is empty; give the text to send to the agent.',
        code: 'directive_empty',
      });
    await this.send('directive', { text });
  }

  async answerApproval(toolCallId: string, answer: ApprovalAnswer): Promise<AnswerOutcome> {
    const checked = checkApprovalAnswer(answer);
    if (typeof toolCallId !== 'string' || toolCallId === '')
      throw new ConfigError({
        message: 'An answer names the tool call it answers; give its id (rho approve lists the waiting calls).',
        code: 'approval_answer_invalid',
      });
    const [row] = await this.sql<
      { outcome: string; live_status: string | null; answer: Record<string, unknown> | null }[]
    >`
      select outcome, live_status, answer from answer_approval(${this.sessionId}, ${toolCallId},
        ${this.sql.json({ ...checked })}, ${this.channel})`;
    if (row === undefined || row.outcome === 'not_found')
      throw new SessionNotFoundError({
        message: `The fleet has no session ${this.sessionId}; list them with rho ps.`,
      });
    if (row.outcome === 'refused' || row.answer === null)
      throw new FleetSignalRefusedError({
        sessionId: this.sessionId,
        signal: 'approval',
        status: row.live_status ?? 'unknown',
      });
    const recorded = answerFromJson(row.answer);
    return row.outcome === 'answered'
      ? { outcome: 'answered', answer: recorded }
      : { outcome: 'already_answered', answer: recorded };
  }

  private async send(kind: SignalKind, payload?: { text: string }): Promise<ControlOutcome> {
    const [row] = await this.sql<{ outcome: string; live_status: string | null }[]>`
      select outcome, live_status from send_signal(${this.sessionId}, ${kind},
        ${payload === undefined ? null : this.sql.json(payload)}, ${this.channel})`;
    if (row === undefined || row.outcome === 'not_found')
      throw new SessionNotFoundError({
        message: `The fleet has no session ${this.sessionId}; list them with rho ps.`,
      });
    if (row.outcome === 'refused')
      throw new FleetSignalRefusedError({
        sessionId: this.sessionId,
        signal: kind,
        status: row.live_status ?? 'unknown',
      });
    return row.outcome === 'requested' ? 'requested' : 'unchanged';
  }
}
