import type { RawTraceRecord, TraceRecord, UsageTotals } from '@rho/core';
import { isKnownRecord, RhoError } from '@rho/core';
import type { Fleet, FleetSession, FleetSessionStatus } from '@rho/fleet';
import type { MonitoredSession } from '@rho/monitor';
import { EXIT, UsageError } from '../../exit-codes.js';
import { formatCost } from '../../format.js';
import { createEventRenderer } from '../../render.js';
import type { ControlKind } from './monitor-actions.js';
import type { MonitorIo } from './monitor-io.js';
import { formatSessionTable } from './session-table.js';

/** Live statuses: a session that can take a signal. */
const LIVE: readonly FleetSessionStatus[] = ['running', 'paused', 'waiting_approval'];

/** The statuses `rho ps --status` accepts. */
export const FLEET_STATUSES: readonly FleetSessionStatus[] = [
  'created',
  'running',
  'paused',
  'waiting_approval',
  'completed',
  'error',
  'cancelled',
  'limit',
  'truncated',
  'dead',
];

/** Filters of `rho ps` over a fleet. */
export interface FleetPsOptions {
  json: boolean;
  limit?: number;
  host?: string;
  label?: string;
  status?: string[];
}

/** `ps` over the fleet: every node's sessions (filtered), as a table with a HOST column or as JSON. */
export async function fleetPsAction(fleet: Fleet, options: FleetPsOptions, io: MonitorIo): Promise<number> {
  const statuses = options.status?.flatMap((value) => value.split(',')).filter((value) => value !== '');
  for (const status of statuses ?? [])
    if (!FLEET_STATUSES.includes(status as FleetSessionStatus))
      throw new UsageError({ message: `--status ${status} is not a status; use one of ${FLEET_STATUSES.join(', ')}.` });
  const filters = {
    ...(options.host === undefined ? {} : { host: options.host }),
    ...(options.label === undefined ? {} : { label: options.label }),
    ...(statuses === undefined || statuses.length === 0 ? {} : { status: statuses as FleetSessionStatus[] }),
  };
  let sessions = await fleet.listSessions({
    ...filters,
    ...(options.limit === undefined ? {} : { limit: options.limit }),
  });
  const full = options.limit !== undefined && sessions.length >= options.limit;
  // As locally: older sessions that are still live stay in the table, so a long run never drops out of sight.
  if (!options.json && full && filters.status === undefined) {
    const shown = new Set(sessions.map((session) => session.id));
    const live = await fleet.listSessions({ ...filters, status: [...LIVE] });
    sessions = [...sessions, ...live.filter((session) => !shown.has(session.id))];
  }
  if (options.json) {
    io.out(`${JSON.stringify(sessions.map(fleetSessionJson))}\n`);
    return EXIT.completed;
  }
  if (sessions.length === 0) {
    const filtered = options.host !== undefined || options.label !== undefined || (statuses?.length ?? 0) > 0;
    io.out(filtered ? 'No sessions in the fleet match.\n' : 'No sessions in the fleet yet; run a task with --fleet.\n');
    return EXIT.completed;
  }
  const width = (io.terminal.stdout as { columns?: number }).columns ?? 120;
  // As the local listing: `unknown` when no call was priced, `$x + unpriced` when some were not.
  const costs = new Map(
    sessions.map((session) => [
      session.id,
      formatCost({ cost_usd: session.costUsd, unpriced_calls: session.unpricedCalls } as UsageTotals).replace(
        'cost unknown',
        'unknown',
      ),
    ]),
  );
  io.out(`${formatSessionTable(sessions.map(asMonitored), { color: io.color, width, costs, hosts: true })}\n`);
  if (full) io.out(`(the newest ${options.limit} shown; use --limit N or --json for more)\n`);
  return EXIT.completed;
}

/** A fleet session in `ps --json`: snake_case, as the local listing. */
export function fleetSessionJson(session: FleetSession): Record<string, unknown> {
  return {
    id: session.id,
    status: session.status,
    recorded_status: session.recordedStatus,
    host: session.host,
    pid: session.pid ?? null,
    cwd: session.cwd ?? null,
    model: session.model ?? null,
    profile: session.profile ?? null,
    labels: session.labels,
    started_at: session.startedAt,
    updated_at: session.updatedAt,
    heartbeat_at: session.heartbeatAt ?? null,
    first_prompt: session.firstPrompt ?? null,
    input_tokens: session.inputTokens,
    output_tokens: session.outputTokens,
    cost_usd: session.costUsd === 0 && session.unpricedCalls > 0 ? null : session.costUsd,
    unpriced_calls: session.unpricedCalls,
    parent_id: session.parentId ?? null,
    records: session.records,
  };
}

function asMonitored(session: FleetSession): MonitoredSession {
  return {
    id: session.id,
    directory: '',
    status: session.status as MonitoredSession['status'],
    recordedStatus: session.recordedStatus,
    ...(session.model === undefined ? {} : { model: session.model }),
    ...(session.profile === undefined ? {} : { profile: session.profile }),
    startedAt: session.startedAt,
    updatedAt: session.updatedAt,
    ...(session.heartbeatAt === undefined ? {} : { heartbeatAt: session.heartbeatAt }),
    ...(session.pid === undefined ? {} : { pid: session.pid }),
    hostname: session.host,
    ...(session.firstPrompt === undefined ? {} : { firstPrompt: session.firstPrompt }),
    costUsd: session.costUsd,
    ...(session.parentId === undefined ? {} : { parentId: session.parentId }),
  };
}

/**
 * The session `latest` names in the fleet: for cancel and pause the newest live one, for resume
 * the newest paused one, otherwise the newest.
 */
export async function fleetLatestId(fleet: Fleet, kind?: ControlKind): Promise<string> {
  const status: FleetSessionStatus[] | undefined =
    kind === 'resume' ? ['paused'] : kind === undefined ? undefined : [...LIVE];
  const [chosen] = await fleet.listSessions({ limit: 1, ...(status === undefined ? {} : { status }) });
  if (chosen !== undefined) return chosen.id;
  throw new UsageError({
    message:
      kind === undefined
        ? 'No sessions in the fleet yet; run a task with --fleet first.'
        : `No ${kind === 'resume' ? 'paused' : 'running'} session in the fleet: 'latest' means the newest one (rho ps lists them).`,
  });
}

/** `watch` over the fleet: the mirrored records of a session on any node, as they arrive. */
export async function fleetWatchAction(
  fleet: Fleet,
  prefix: string,
  options: { json: boolean; follow: boolean; fromStart: boolean; signal?: AbortSignal },
  io: MonitorIo,
): Promise<number> {
  const target = await fleet.resolveSession(prefix);
  const width = (io.terminal.stdout as { columns?: number }).columns ?? 120;
  const replay = (write: (text: string) => void) => {
    const renderer = createEventRenderer({ mode: 'replay', out: write, color: io.color, width });
    return (record: TraceRecord) => {
      if (isKnownRecord(record as unknown as RawTraceRecord)) renderer(record);
    };
  };
  const render = replay(io.out);
  // Child sessions (delegate) are shown under their parent: indented, or tagged in JSON, as locally.
  const childRenderers = new Map<string, (record: TraceRecord) => void>();
  const renderChild = (childId: string, record: TraceRecord) => {
    let renderer = childRenderers.get(childId);
    if (renderer === undefined) {
      const prefix = `  ┆ ${childId.slice(0, 8)} `;
      renderer = replay((text) =>
        io.out(
          text
            .split('\n')
            .map((line) => (line === '' ? line : `${prefix}${line}`))
            .join('\n'),
        ),
      );
      childRenderers.set(childId, renderer);
    }
    renderer(record);
  };
  if (!options.json)
    io.err(`Watching ${target.id} on ${target.host} (Ctrl+C stops watching; the agent keeps running)\n`);
  const { followFleetSession } = await import('./fleet-watch.js');
  for await (const { record, childId } of followFleetSession(fleet, target, {
    afterSeq: options.fromStart ? 0 : target.records,
    follow: options.follow,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    onConnectionLost: (error) => {
      const text =
        error === undefined
          ? "The fleet's database answers again; watching on.\n"
          : `The fleet's database went away (${error instanceof Error ? error.message : String(error)}); reconnecting (for up to 5 minutes)...\n`;
      if (options.json)
        io.out(
          `${JSON.stringify({ type: 'warning', ts: new Date().toISOString(), message: text.trim(), source: 'fleet' })}\n`,
        );
      else io.err(text);
    },
  })) {
    if (options.json)
      io.out(`${JSON.stringify(childId === undefined ? record : { ...record, child_session_id: childId })}\n`);
    else if (childId === undefined) render(record);
    else renderChild(childId, record);
  }
  if (options.signal?.aborted === true) {
    if (!options.json) io.err('Stopped watching.\n');
    return EXIT.completed;
  }
  const [after] = await fleet.listSessions({ idPrefix: target.id, limit: 1 });
  if (!options.json)
    io.err(
      `Session ${target.id} ${after?.status === 'dead' ? `is dead: its heartbeat stopped (host ${after.host})` : `ended (${after?.status ?? 'unknown'})`}\n`,
    );
  return EXIT.completed;
}

/**
 * `cancel`, `pause`, `resume` over the fleet. One session: the fleet refuses a signal for a
 * session that is not live, and the refusal is the message (exit 2). `all`: every live (for
 * resume: paused) session of the fleet.
 */
export async function fleetControlAction(
  kind: ControlKind,
  fleet: Fleet,
  target: { prefix?: string; all: boolean },
  io: MonitorIo,
): Promise<number> {
  if (target.all && target.prefix !== undefined && target.prefix !== 'all')
    throw new UsageError({ message: `Give either a session prefix or --all, not both.` });
  const all = target.all || target.prefix === 'all';
  if (!all && (target.prefix === undefined || target.prefix === ''))
    throw new UsageError({ message: `Give a session id prefix, or use --all (rho ps lists the sessions).` });
  const send = (id: string) => {
    const operator = fleet.operator(id);
    return kind === 'cancel'
      ? operator.requestCancel()
      : kind === 'pause'
        ? operator.requestPause()
        : operator.requestResume();
  };
  if (!all) {
    const session = await fleet.resolveSession(target.prefix!);
    const outcome = await refusalAsExit(() => send(session.id), io);
    if (typeof outcome === 'number') return outcome;
    io.out(
      outcome === 'requested'
        ? `${kind}: ${session.id} (${session.host})\n`
        : kind === 'resume'
          ? `${session.id}: not paused (${session.status}); nothing to unpause\n`
          : `${session.id}: ${kind} already requested\n`,
    );
    return EXIT.completed;
  }
  const sessions = await fleet.listSessions({ status: kind === 'resume' ? ['paused'] : [...LIVE], limit: 10_000 });
  let changed = 0;
  for (const session of sessions) {
    try {
      if ((await send(session.id)) === 'requested') {
        changed += 1;
        io.out(`${kind}: ${session.id} (${session.host})\n`);
      }
    } catch (error) {
      // A session that finished since it was listed: nothing to do.
      if (!(RhoError.isInstance(error) && error.code === 'fleet_signal_refused')) throw error;
    }
  }
  const noun = kind === 'resume' ? 'paused sessions to resume' : `running sessions to ${kind}`;
  io.out(changed === 0 ? `No ${noun}\n` : `Sent ${kind} to ${changed} session${changed === 1 ? '' : 's'}\n`);
  return EXIT.completed;
}

/** `directive` over the fleet: queued for a live session on any node (refused for one that is not live). */
export async function fleetDirectiveAction(fleet: Fleet, prefix: string, text: string, io: MonitorIo): Promise<number> {
  if (text.trim() === '')
    throw new UsageError({ message: 'The directive is empty: rho directive PREFIX "what the agent should do".' });
  const session = await fleet.resolveSession(prefix);
  const outcome = await refusalAsExit(() => fleet.operator(session.id).sendDirective(text), io);
  if (typeof outcome === 'number') return outcome;
  io.out(`directive queued for ${session.id} (${session.host})\n`);
  return EXIT.completed;
}

/** Runs a signal; a refusal (the session is not live) is printed and becomes exit 2. */
async function refusalAsExit<T>(send: () => Promise<T>, io: MonitorIo): Promise<T | number> {
  try {
    return await send();
  } catch (error) {
    if (RhoError.isInstance(error) && error.code === 'fleet_signal_refused') {
      io.err(`rho: ${error.message}\n`);
      return EXIT.badInput;
    }
    throw error;
  }
}
