// The monitor commands over a SessionSource (@rho/monitor): this machine's sessions directory or a
// fleet (@rho/fleet), the same code for both. What differs is only said differently: a fleet's
// sessions name their host, a directory's listing knows how many sessions it left out.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { RawTraceRecord } from '@rho/core';
import { ACTIVE_SESSION_STATUSES, isKnownRecord, RhoError } from '@rho/core';
import type { ControlKind, ListedSession, SessionFilter, SessionSource } from '@rho/monitor';
import { LISTED_STATUSES } from '@rho/monitor';
import { databaseFailure, EXIT, UsageError } from '../../exit-codes.js';
import { createEventRenderer } from '../../render.js';
import type { MonitorIo } from './monitor-io.js';
import { localSessionsNotInFleet } from './local-sessions.js';
import { directoryJson, fleetJson } from './ps-json.js';
import { formatSessionTable } from './session-table.js';

export type { ControlKind } from '@rho/monitor';

/** Live statuses: a session that can take a signal. */
const LIVE: readonly string[] = ACTIVE_SESSION_STATUSES;

/** The statuses `rho ps --status` accepts: every status a listing shows. */
export const PS_STATUSES: readonly string[] = LISTED_STATUSES;

/** Throws a UsageError (exit 2) when `directory` was given explicitly and is not a directory. */
export function requireDirectory(directory: string, explicit: boolean): void {
  if (!isDirectory(directory) && explicit)
    throw new UsageError({
      message: `Not a sessions directory: ${directory}. Pass the directory that holds the session folders (default: $RHO_HOME/sessions).`,
    });
}

/** Options of {@link psAction}. */
export interface PsOptions {
  json: boolean;
  limit?: number;
  /** Filters of a fleet's sessions (a directory has no hosts or labels to filter by: they are ignored there, with a warning). */
  host?: string;
  label?: string;
  status?: string[];
  /** A sessions directory: the Python rho-agent's sessions (this directory) are listed after rho's, marked. */
  rhoAgent?: SessionSource;
  /** With a fleet: this machine's sessions directory, whose sessions the fleet does not know are listed after the fleet's, marked. */
  local?: SessionSource;
}

/**
 * `ps`: every session as a JSON array with `json` (or the newest `limit`), else a table of the
 * newest `limit` sessions plus any older ones that are still live, so a long-running agent never
 * drops out of sight; a fleet's table has a HOST column. With `rhoAgent`, the Python rho-agent's
 * sessions follow, marked (`source: "rho-agent"` in JSON, their own titled table otherwise).
 */
export async function psAction(source: SessionSource, options: PsOptions, io: MonitorIo): Promise<number> {
  const fleet = source.kind === 'fleet';
  const statuses = options.status?.flatMap((value) => value.split(',')).filter((value) => value !== '');
  const filtered = options.host !== undefined || options.label !== undefined || (statuses?.length ?? 0) > 0;
  if (fleet)
    for (const status of statuses ?? [])
      if (!PS_STATUSES.includes(status))
        throw new UsageError({ message: `--status ${status} is not a status; use one of ${PS_STATUSES.join(', ')}.` });
  if (!fleet && (options.label !== undefined || options.status !== undefined || options.host !== undefined))
    io.err('Warning: --host, --label and --status filter the sessions of a fleet; listing all of them here.\n');
  const filter: SessionFilter = {
    ...(fleet && options.host !== undefined ? { hostname: options.host } : {}),
    ...(fleet && options.label !== undefined ? { label: options.label } : {}),
    ...(fleet && statuses !== undefined && statuses.length > 0 ? { status: statuses } : {}),
    ...(options.limit === undefined ? {} : { limit: options.limit }),
    // The table shows the cost of live sessions so far, and keeps older live sessions in sight.
    ...(options.json ? {} : { keepLive: true, liveUsage: true }),
  };
  const listed = await source.list(filter);
  const legacy = options.rhoAgent === undefined ? undefined : await rhoAgentSessions(options.rhoAgent, source, filter);
  // A filter asks for what the fleet records (hosts, labels, statuses): unregistered sessions are not looked for.
  const local =
    fleet && options.local !== undefined && !filtered
      ? await localSessionsNotInFleet(source, options.local, options.limit)
      : undefined;
  if (options.json) {
    const json = fleet ? fleetJson : directoryJson;
    io.out(
      `${JSON.stringify([
        ...listed.sessions.map(json),
        ...(legacy?.sessions ?? []).map((session) => ({ ...directoryJson(session), source: 'rho-agent' })),
        ...(local?.sessions ?? []).map((session) => ({ ...directoryJson(session), in_fleet: false })),
      ])}\n`,
    );
    return EXIT.completed;
  }
  const empty = fleet
    ? filtered
      ? 'No sessions in the fleet match.\n'
      : 'No sessions in the fleet yet; run a task with --fleet.\n'
    : `No sessions in ${source.description} yet; run a task first.\n`;
  if (legacy !== undefined && legacy.sessions.length > 0) {
    if (listed.sessions.length === 0) io.out(empty);
    else await psTable(source, listed, options.limit, io);
    io.out(`\nSessions of rho-agent (${options.rhoAgent!.description}):\n`);
    await psTable(options.rhoAgent!, legacy, options.limit, io);
    return EXIT.completed;
  }
  if (listed.sessions.length === 0) io.out(empty);
  else await psTable(source, listed, options.limit, io);
  if (local !== undefined && local.sessions.length > 0) {
    io.out(`\nLocal sessions not in the fleet (${local.total}):\n`);
    await psTable(options.local!, local, options.limit, io);
  }
  return EXIT.completed;
}

/** The Python rho-agent's sessions, when its directory is another one than `source`'s and exists. */
async function rhoAgentSessions(rhoAgent: SessionSource, source: SessionSource, filter: SessionFilter) {
  if (source.kind !== 'directory' || resolve(rhoAgent.description) === resolve(source.description)) return undefined;
  if (!isDirectory(rhoAgent.description)) return undefined;
  return rhoAgent.list(filter);
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A listing as the `ps` table, then what was left out and what could not be read. */
async function psTable(
  source: SessionSource,
  listed: { sessions: ListedSession[]; total?: number },
  limit: number | undefined,
  io: MonitorIo,
): Promise<void> {
  const shown = listed.sessions;
  const width = (io.terminal.stdout as { columns?: number }).columns ?? 120;
  // @rho/workspace loads only when a session recorded what its isolated workspace changed.
  const formatChanges = shown.some((session) => session.changes !== undefined)
    ? (await import('@rho/workspace')).formatChangeStats
    : undefined;
  io.out(
    `${formatSessionTable(shown, { color: io.color, width, hosts: source.kind === 'fleet', ...(formatChanges === undefined ? {} : { formatChanges }) })}\n`,
  );
  if (listed.total !== undefined) {
    if (shown.length < listed.total)
      io.out(`(${listed.total - shown.length} older sessions not shown; use --limit N or --json)\n`);
  } else if (limit !== undefined && shown.length >= limit)
    io.out(`(the newest ${limit} shown; use --limit N or --json for more)\n`);
  // Sessions that cannot be read are listed (status unknown), and why is said here.
  for (const session of shown) if (session.problem !== undefined) io.err(`${session.id}: ${session.problem}\n`);
}

/** ` (host)` after a fleet session's id, where a message names it; nothing for this machine's. */
function where(source: SessionSource, session: ListedSession): string {
  return source.kind === 'fleet' ? ` (${session.hostname ?? '?'})` : '';
}

/**
 * The session `latest` names, for a command: for `cancel` and `pause` the newest live one, for
 * `resume` (unpause) the newest paused one, otherwise the newest session.
 */
export async function latestSessionId(source: SessionSource, kind?: ControlKind): Promise<string> {
  const status = kind === 'resume' ? ['paused'] : kind === undefined ? undefined : LIVE;
  const [chosen] = (await source.list({ limit: 1, ...(status === undefined ? {} : { status }) })).sessions;
  if (chosen !== undefined) return chosen.id;
  if (source.kind === 'fleet')
    throw new UsageError({
      message:
        kind === undefined
          ? 'No sessions in the fleet yet; run a task with --fleet first.'
          : `No ${kind === 'resume' ? 'paused' : 'running'} session in the fleet: 'latest' means the newest one (rho ps lists them).`,
    });
  if (kind === undefined || (await source.list({ limit: 1 })).sessions.length === 0)
    throw new UsageError({ message: `No sessions in ${source.description} yet; run a task first.` });
  const what = kind === 'resume' ? 'paused' : 'running';
  throw new UsageError({
    message: `No ${what} session to ${kind === 'resume' ? 'unpause' : kind}: 'latest' means the newest ${what} one here (rho ps lists them).${kind === 'resume' ? ' To continue a finished session with a new task, use rho --resume latest "task".' : ''}`,
  });
}

/** `watch`: renders the session's events until its run ends (or forever with `follow`), or until `signal` aborts. */
export async function watchAction(
  source: SessionSource,
  prefix: string,
  options: { json: boolean; follow: boolean; fromStart: boolean; signal?: AbortSignal },
  io: MonitorIo,
): Promise<number> {
  const target = await source.resolve(prefix);
  const width = (io.terminal.stdout as { columns?: number }).columns ?? 120;
  const replay = (write: (text: string) => void, sessionId: string) => {
    const renderer = createEventRenderer({ mode: 'replay', out: write, color: io.color, width, sessionId });
    return (record: RawTraceRecord) => {
      if (isKnownRecord(record)) renderer(record);
    };
  };
  const render = options.json ? (record: object) => io.out(`${JSON.stringify(record)}\n`) : replay(io.out, target.id);
  // Child sessions (delegate) are shown under their parent: indented, or tagged in JSON.
  const childRenderers = new Map<string, (record: RawTraceRecord) => void>();
  const renderChild = (childId: string, record: RawTraceRecord) => {
    if (options.json) {
      io.out(`${JSON.stringify({ ...record, child_session_id: childId })}\n`);
      return;
    }
    let renderer = childRenderers.get(childId);
    if (renderer === undefined) {
      const prefix = `  ┆ ${childId.slice(0, 8)} `;
      renderer = replay(
        (text) =>
          io.out(
            text
              .split('\n')
              .map((line) => (line === '' ? line : `${prefix}${line}`))
              .join('\n'),
          ),
        childId,
      );
      childRenderers.set(childId, renderer);
    }
    renderer(record);
  };
  if (!options.json)
    io.err(
      `Watching ${target.id}${source.kind === 'fleet' ? ` on ${target.hostname ?? '?'}` : ''} (Ctrl+C stops watching; the agent keeps running)\n`,
    );
  for await (const { record, childId } of source.follow(target.id, {
    fromStart: options.fromStart,
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
    if (childId === undefined) render(record);
    else renderChild(childId, record);
  }
  if (options.signal?.aborted === true) {
    if (!options.json) io.err('Stopped watching.\n');
    return EXIT.completed;
  }
  // Only for the closing line: a database that went away again just now does not fail a watch
  // that showed every record.
  const after = await source.get(target.id).catch((error: unknown) => {
    if (databaseFailure(error) === undefined) throw error;
    return undefined;
  });
  const dead =
    source.kind === 'fleet'
      ? `its heartbeat stopped (host ${after?.hostname ?? '?'})`
      : (after?.statusReason ?? 'its process is gone');
  if (!options.json)
    io.err(
      `Session ${target.id} ${after?.status === 'dead' ? `is dead: ${dead}` : `ended (${after?.status ?? 'unknown'})`}\n`,
    );
  return EXIT.completed;
}

/**
 * `cancel`, `pause`, `resume` for one session (a unique prefix) or `all`. Cancel and pause only
 * reach live sessions: a directory keeps them from a finished session (a sentinel left there
 * would stop or hold its next resume: a note, exit 0, as rho-agent did); a fleet refuses them
 * (exit 2: across machines an operator must know the request will not be read). Resume removes a
 * pause wherever it is.
 */
export async function controlAction(
  kind: ControlKind,
  source: SessionSource,
  target: { prefix?: string; all: boolean },
  io: MonitorIo,
): Promise<number> {
  if (target.all && target.prefix !== undefined && target.prefix !== 'all')
    throw new UsageError({ message: `Give either a session prefix or --all, not both.` });
  const all = target.all || target.prefix === 'all';
  if (!all && (target.prefix === undefined || target.prefix === ''))
    throw new UsageError({ message: `Give a session id prefix, or use --all (rho ps lists the sessions).` });
  if (!all) {
    const session = await source.resolve(target.prefix!);
    const result = await refusalAsExit(() => source.control(session.id, kind), io);
    if (typeof result === 'number') return result;
    const { outcome, status, live } = result;
    if (outcome === 'not_live') io.out(`${session.id}: ${status}, not running; nothing to ${kind}\n`);
    else if (outcome === 'requested') io.out(`${kind}: ${session.id}${where(source, session)}\n`);
    else if (kind !== 'resume') io.out(`${session.id}: ${kind} already requested\n`);
    else if (source.kind === 'fleet') io.out(`${session.id}: not paused (${status}); nothing to unpause\n`);
    else
      io.out(
        `${session.id}: not paused (${status}); nothing to unpause.${live ? '' : ` To continue it with a new task: rho --resume ${session.id} "task"`}\n`,
      );
    return EXIT.completed;
  }
  const { sessions } = await source.list({ accepts: kind, limit: 10_000 });
  // A directory's sessions in the order of their ids (its listing's order before the sources).
  const targets = source.kind === 'directory' ? [...sessions].sort((a, b) => (a.id < b.id ? -1 : 1)) : sessions;
  let changed = 0;
  for (const session of targets) {
    try {
      if ((await source.control(session.id, kind)).outcome === 'requested') {
        changed += 1;
        io.out(`${kind}: ${session.id}${where(source, session)}\n`);
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

/**
 * `directive`: queues an instruction for one session; it reaches the model before its next call.
 * A directory keeps it for a session that is not live until it is resumed; a fleet refuses it.
 */
export async function directiveAction(
  source: SessionSource,
  prefix: string,
  text: string,
  io: MonitorIo,
): Promise<number> {
  if (text.trim() === '')
    throw new UsageError({ message: 'The directive is empty: rho directive PREFIX "what the agent should do".' });
  const session = await source.resolve(prefix);
  const result = await refusalAsExit(() => source.sendDirective(session.id, text), io);
  if (typeof result === 'number') return result;
  io.out(
    result.live
      ? `directive queued for ${session.id}${where(source, session)}\n`
      : `directive queued for ${session.id} (${result.status}: it is delivered when the session is resumed)\n`,
  );
  return EXIT.completed;
}

/** Runs a signal; a fleet's refusal (the session is not live) is printed and becomes exit 2. */
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
