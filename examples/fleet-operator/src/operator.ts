import { FleetSignalRefusedError } from '@rho/fleet';
import type { ListedSession, SessionFilter, SessionSource } from '@rho/monitor';

/** Where the operator's commands write. */
export interface Output {
  out(text: string): void;
  err(text: string): void;
}

/** One line for a session: id, status, host, model, cost so far and the task it was given. */
export function sessionLine(session: ListedSession): string {
  const cost =
    session.costUsd === undefined || session.costUsd === null
      ? 'cost unknown'
      : `$${session.costUsd.toFixed(4)}${(session.unpricedCalls ?? 0) > 0 ? ' + unpriced' : ''}`;
  return [
    session.id,
    session.status,
    session.hostname ?? '-',
    session.model ?? '-',
    cost,
    (session.firstPrompt ?? '').replace(/\s+/g, ' ').slice(0, 60),
  ].join('\t');
}

/** `list`: the sessions of every node, newest first, as lines or as a JSON array; returns the exit code. */
export async function listSessions(
  source: SessionSource,
  filter: SessionFilter,
  options: { json: boolean },
  output: Output,
): Promise<number> {
  const { sessions } = await source.list(filter);
  if (options.json) output.out(`${JSON.stringify(sessions)}\n`);
  else for (const session of sessions) output.out(`${sessionLine(session)}\n`);
  return 0;
}

/**
 * `cancel`: asks one session (an id or a unique prefix) or every live one (`all`, narrowed by
 * host or label) to stop, wherever it runs. The fleet refuses a session that is not live: for one
 * session that is an error (exit 2); with `all`, a session that ended since it was listed is
 * passed over.
 */
export async function cancelSessions(
  source: SessionSource,
  target: { prefix?: string; all?: boolean; hostname?: string; label?: string },
  output: Output,
): Promise<number> {
  if (target.all !== true) {
    if (target.prefix === undefined) {
      output.err('Name a session (an id or a unique prefix), or use --all.\n');
      return 2;
    }
    const session = await source.resolve(target.prefix);
    try {
      const { outcome, status } = await source.control(session.id, 'cancel');
      output.out(
        outcome === 'requested'
          ? `cancel requested: ${session.id} (${session.hostname ?? '?'})\n`
          : outcome === 'unchanged'
            ? `${session.id}: cancel already requested\n`
            : // A sessions directory keeps a cancel from a session that is not live (a fleet refuses it).
              `${session.id}: ${status}, not running; nothing to cancel\n`,
      );
      return 0;
    } catch (error) {
      if (!FleetSignalRefusedError.isInstance(error)) throw error;
      output.err(`${error.message}\n`);
      return 2;
    }
  }
  const { sessions } = await source.list({
    accepts: 'cancel',
    ...(target.hostname === undefined ? {} : { hostname: target.hostname }),
    ...(target.label === undefined ? {} : { label: target.label }),
  });
  let cancelled = 0;
  for (const session of sessions) {
    try {
      if ((await source.control(session.id, 'cancel')).outcome !== 'requested') continue;
    } catch (error) {
      if (FleetSignalRefusedError.isInstance(error)) continue;
      throw error;
    }
    cancelled += 1;
    output.out(`cancel requested: ${session.id} (${session.hostname ?? '?'})\n`);
  }
  output.out(`${cancelled} session${cancelled === 1 ? '' : 's'} asked to stop\n`);
  return 0;
}
