import type { ControlOutcome, OperatorChannel } from '@rho/core';
import { ConfigError, SessionNotFoundError } from '@rho/core';
import type { Sql, TransactionSql } from 'postgres';
import { FleetSignalRefusedError } from '../errors.js';
import { LIVE_STATUS_SQL } from '../migrations.js';

type SignalKind = 'cancel' | 'pause' | 'resume' | 'directive';

interface LockedRow {
  live_status: string;
  cancel_requested: boolean;
  pause_requested: boolean;
}

/**
 * The operators' side of a session's control channel on PostgreSQL. Each request is one
 * transaction: it locks the session's registry row (so concurrent requests are serialized and
 * exactly one sees `requested`), refuses a session that has finished or is dead, sets the flag,
 * appends the signal with the session's next signal number, and notifies the agent (NOTIFY is
 * delivered at commit, so the agent never reads a signal that was rolled back).
 */
export class PgOperatorChannel implements OperatorChannel {
  constructor(
    private readonly sql: Sql,
    readonly sessionId: string,
    private readonly channel: string,
  ) {}

  requestCancel(): Promise<ControlOutcome> {
    return this.send('cancel', (row) => !row.cancel_requested, 'cancel_requested = true');
  }

  requestPause(): Promise<ControlOutcome> {
    return this.send('pause', (row) => !row.pause_requested, 'pause_requested = true');
  }

  requestResume(): Promise<ControlOutcome> {
    return this.send('resume', (row) => row.pause_requested, 'pause_requested = false');
  }

  async sendDirective(text: string): Promise<void> {
    if (typeof text !== 'string' || text.trim() === '')
      throw new ConfigError({
        message: 'The directive is empty; give the text to send to the agent.',
        code: 'directive_empty',
      });
    await this.send('directive', () => true, undefined, { text });
  }

  private async send(
    kind: SignalKind,
    changes: (row: LockedRow) => boolean,
    assignment: string | undefined,
    payload?: { text: string },
  ): Promise<ControlOutcome> {
    return this.sql.begin(async (sql: TransactionSql) => {
      const [row] = await sql<LockedRow[]>`
        select ${sql.unsafe(LIVE_STATUS_SQL)} as live_status, r.cancel_requested, r.pause_requested
        from agent_registry r where r.session_id = ${this.sessionId} for update`;
      if (row === undefined)
        throw new SessionNotFoundError({
          message: `The fleet has no session ${this.sessionId}; list them with rho ps.`,
        });
      if (!['created', 'running', 'paused', 'waiting_approval'].includes(row.live_status))
        throw new FleetSignalRefusedError({ sessionId: this.sessionId, signal: kind, status: row.live_status });
      if (!changes(row)) return 'unchanged' as const;
      const [updated] = await sql<{ signal_seq: string }[]>`
        update agent_registry set signal_seq = signal_seq + 1, updated_at = now()
          ${assignment === undefined ? sql`` : sql`, ${sql.unsafe(assignment)}`}
        where session_id = ${this.sessionId} returning signal_seq`;
      await sql`insert into signal_queue (session_id, seq, kind, payload)
        values (${this.sessionId}, ${updated!.signal_seq}, ${kind}, ${payload === undefined ? null : sql.json(payload)})`;
      await sql`select pg_notify(${this.channel}, ${`${this.sessionId} ${kind}`})`;
      return 'requested' as const;
    }) as Promise<ControlOutcome>;
  }
}
