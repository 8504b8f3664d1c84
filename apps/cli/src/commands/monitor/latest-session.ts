import { listSessions } from '@rho/monitor';
import { UsageError } from '../../exit-codes.js';

/**
 * The session `latest` names, for a command: for `cancel` and `pause` the newest running one,
 * for `resume` (unpause) the newest paused one, otherwise the newest session.
 */
export function latestSessionId(directory: string, kind?: 'cancel' | 'pause' | 'resume'): string {
  const sessions = listSessions(directory);
  const wanted =
    kind === 'resume' ? ['paused'] : kind === undefined ? undefined : ['running', 'waiting_approval', 'paused'];
  const chosen = wanted === undefined ? sessions[0] : sessions.find((session) => wanted.includes(session.status));
  if (chosen !== undefined) return chosen.id;
  if (sessions.length === 0) throw new UsageError({ message: `No sessions in ${directory} yet; run a task first.` });
  const what = kind === 'resume' ? 'paused' : 'running';
  throw new UsageError({
    message: `No ${what} session to ${kind === 'resume' ? 'unpause' : kind}: 'latest' means the newest ${what} one here (rho ps lists them).${kind === 'resume' ? ' To continue a finished session with a new task, use rho --resume latest "task".' : ''}`,
  });
}
