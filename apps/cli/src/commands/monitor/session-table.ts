import type { ListedSession } from '@rho/monitor';
import { ACTIVE_STATUSES, flattenSessionTree, groupSessions } from '@rho/monitor';
import { clipWords, formatElapsed } from '../../format.js';
import { styles } from '../../terminal.js';

/** Options of {@link formatSessionTable}. */
export interface SessionTableOptions {
  color: boolean;
  /** Terminal width; the prompt column is cut to fit. */
  width: number;
  now?: number;
  /** Add a HOST column (sessions of a fleet, on several nodes). */
  hosts?: boolean;
  /** How a finished isolated session's changes read (`@rho/workspace`'s formatChangeStats), before its prompt. */
  formatChanges?: (changes: NonNullable<ListedSession['changes']>) => string;
}

/** The `rho ps` table: children indented under their parent, one line per session. */
export function formatSessionTable(sessions: readonly ListedSession[], options: SessionTableOptions): string {
  const style = styles(options.color);
  const now = options.now ?? Date.now();
  const rows = flattenSessionTree(groupSessions(sessions)).map(({ session, depth }) => ({
    id: `${depth > 0 ? `${'  '.repeat(depth - 1)}└ ` : ''}${session.id}`,
    status: session.status,
    host: session.hostname ?? '-',
    model: session.model ?? '-',
    age: age(session.startedAt, now),
    cost: costOf(session),
    prompt: `${changesNote(session, options.formatChanges)}${oneLine(session.firstPrompt ?? '')}`,
  }));
  const header = {
    id: 'ID',
    status: 'STATUS',
    host: 'HOST',
    model: 'MODEL',
    age: 'AGE',
    cost: 'COST',
    prompt: 'PROMPT',
  };
  const widths = {
    id: Math.max(header.id.length, ...rows.map((row) => row.id.length)),
    status: Math.max(header.status.length, ...rows.map((row) => row.status.length)),
    host:
      options.hosts === true ? Math.min(24, Math.max(header.host.length, ...rows.map((row) => row.host.length))) : 0,
    model: Math.min(24, Math.max(header.model.length, ...rows.map((row) => row.model.length))),
    age: Math.max(header.age.length, ...rows.map((row) => row.age.length)),
    cost: Math.max(header.cost.length, ...rows.map((row) => row.cost.length)),
  };
  const fixed =
    widths.id + widths.status + widths.model + widths.age + widths.cost + 10 + (widths.host > 0 ? widths.host + 2 : 0);
  const promptWidth = Math.max(20, options.width - fixed);
  const line = (row: typeof header, colour: (text: string) => string) =>
    [
      row.id.padEnd(widths.id),
      colour(row.status.padEnd(widths.status)),
      ...(widths.host > 0 ? [cut(row.host, widths.host).padEnd(widths.host)] : []),
      cut(row.model, widths.model).padEnd(widths.model),
      row.age.padStart(widths.age),
      row.cost.padStart(widths.cost),
      cut(row.prompt, promptWidth),
    ]
      .join('  ')
      .trimEnd();
  const colourOf = (status: string): ((text: string) => string) => {
    switch (status) {
      case 'running':
        return style.green;
      case 'paused':
      case 'waiting_approval':
      case 'parked':
      case 'limit':
        return style.yellow;
      case 'truncated':
      case 'refused':
      case 'error':
      case 'dead':
        return style.red;
      case 'cancelled':
      case 'completed':
        return style.dim;
      default:
        return (text) => text;
    }
  };
  return [style.bold(line(header, (text) => text)), ...rows.map((row) => line(row, colourOf(row.status)))].join('\n');
}

/**
 * `$0.0123`; `$0.0123 + unpriced` when some calls had no price; `unknown` when none had one (or a
 * finished session recorded none); `-` while a session has no figure yet.
 */
function costOf(session: ListedSession): string {
  if (session.costUsd === undefined)
    return session.recordedStatus === 'created' || ACTIVE_STATUSES.has(session.recordedStatus) ? '-' : 'unknown';
  if (session.costUsd === null) return 'unknown';
  return `$${session.costUsd.toFixed(4)}${(session.unpricedCalls ?? 0) > 0 ? ' + unpriced' : ''}`;
}

/** `(3 files changed, +12/-4) ` for a finished session that recorded changes, else nothing. */
function changesNote(session: ListedSession, format: SessionTableOptions['formatChanges']): string {
  if (session.changes === undefined || format === undefined || ACTIVE_STATUSES.has(session.status)) return '';
  return `(${format(session.changes)}) `;
}

function age(startedAt: string, now: number): string {
  const started = Date.parse(startedAt);
  if (Number.isNaN(started)) return '-';
  return formatElapsed(Math.max(0, now - started)).replace(/^\d+ms$/, '0s');
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function cut(text: string, width: number): string {
  return clipWords(text, width);
}
