import type { ControlOutcome, OperatorChannel } from '@rho/core';
import { ConfigError, SessionNotFoundError } from '@rho/core';
import type { Sql } from 'postgres';
import { FleetSignalRefusedError } from '../errors.js';

type SignalKind = 'cancel' | 'pause' | 'resume' | 'directive';

/**
 * The operators' side of a session's control channel on PostgreSQL. Each request is one call of
 * the schema's `send_signal` function, in one transaction and one round trip: it locks the
 * session's registry row (so concurrent requests are serialized and exactly one sees
 * `requested`), refuses a session that has finished or is dead, sets the flag, appends the signal
 * with the session's next signal number, and notifies the agent (NOTIFY is delivered at commit,
 * so the agent never reads a signal that was rolled back).
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
