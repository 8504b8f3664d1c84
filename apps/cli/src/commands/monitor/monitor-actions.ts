import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { MonitoredSession } from '@rho/monitor';
import type { RawTraceRecord } from '@rho/core';
import { FileOperatorChannel, SessionStore, State } from '@rho/core';
import { ACTIVE_STATUSES, listSessions, readMonitoredSession } from '@rho/monitor';
import { isKnownRecord } from '@rho/core';
import { sessionLockOwner } from '@rho/core/internal';
import { EXIT, UsageError } from '../../exit-codes.js';
import { formatCost } from '../../format.js';
import { createEventRenderer } from '../../render.js';
import type { MonitorIo } from './monitor-io.js';
import { formatSessionTable } from './session-table.js';
import { watchWithChildren } from './watch-with-children.js';

/** Throws a UsageError (exit 2) when `directory` was given explicitly and is not a directory. */
export function requireDirectory(directory: string, explicit: boolean): void {
  if (!isDirectory(directory) && explicit)
    throw new UsageError({
      message: `Not a sessions directory: ${directory}. Pass the directory that holds the session folders (default: $RHO_HOME/sessions).`,
    });
}

/**
 * `ps`: every session as a JSON array with `json` (or the newest `limit`), else a table of the
 * newest `limit` sessions plus any older ones that are still active, so a long-running agent
 * never drops out of sight. With `rhoAgentDirectory`, the Python rho-agent's sessions follow,
 * marked (`source: "rho-agent"` in JSON, their own titled table otherwise).
 */
export function psAction(
  directory: string,
  options: { json: boolean; limit?: number; rhoAgentDirectory?: string },
  io: MonitorIo,
): number {
  const all = listSessions(directory);
  // The Python rho-agent's sessions, listed after rho's and marked as such.
  const legacyDirectory =
    options.rhoAgentDirectory !== undefined &&
    resolve(options.rhoAgentDirectory) !== resolve(directory) &&
    isDirectory(options.rhoAgentDirectory)
      ? options.rhoAgentDirectory
      : undefined;
  const legacy = legacyDirectory === undefined ? [] : listSessions(legacyDirectory);
  if (options.json) {
    const chosen = options.limit === undefined ? all : all.slice(0, options.limit);
    const chosenLegacy = options.limit === undefined ? legacy : legacy.slice(0, options.limit);
    io.out(
      `${JSON.stringify([...chosen.map(toJson), ...chosenLegacy.map((session) => ({ ...toJson(session), source: 'rho-agent' }))])}\n`,
    );
    return EXIT.completed;
  }
  if (legacy.length > 0) {
    if (all.length === 0) io.out(`No sessions in ${directory} yet; run a task first.\n`);
    else psTable(all, options.limit, io);
    io.out(`\nSessions of rho-agent (${legacyDirectory}):\n`);
    psTable(legacy, options.limit, io);
    return EXIT.completed;
  }
  if (all.length === 0) {
    io.out(`No sessions in ${directory} yet; run a task first.\n`);
    return EXIT.completed;
  }
  psTable(all, options.limit, io);
  return EXIT.completed;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The newest `limit` sessions plus any older ones still active, then what could not be read. */
function psTable(all: MonitoredSession[], limit: number | undefined, io: MonitorIo): void {
  const shown = all.filter((session, index) => index < (limit ?? all.length) || ACTIVE_STATUSES.has(session.status));
  const width = (io.terminal.stdout as { columns?: number }).columns ?? 120;
  io.out(`${formatSessionTable(shown, { color: io.color, width, costs: liveCosts(shown) })}\n`);
  if (shown.length < all.length)
    io.out(`(${all.length - shown.length} older sessions not shown; use --limit N or --json)\n`);
  // Sessions that cannot be read are listed (status unknown), and why is said here.
  for (const session of shown) if (session.problem !== undefined) io.err(`${session.id}: ${session.problem}\n`);
}

/**
 * The cost of each active session so far, summed from its trace (meta.json has it only once a run
 * ends): `$0.0123`, `unknown` when no call was priced, `$0.0123 + unpriced` when some were not.
 */
function liveCosts(sessions: readonly MonitoredSession[]): Map<string, string> {
  const costs = new Map<string, string>();
  for (const session of sessions) {
    if (!ACTIVE_STATUSES.has(session.status)) continue;
    try {
      const usage = State.fromJsonl(readFileSync(join(session.directory, 'trace.jsonl'))).usage;
      // No model call has ended yet: nothing is known.
      if (usage.input_tokens + usage.output_tokens === 0 && (usage.unpriced_calls ?? 0) === 0) continue;
      costs.set(session.id, formatCost(usage).replace('cost unknown', 'unknown'));
    } catch {
      // An unreadable trace keeps meta.json's figure.
    }
  }
  return costs;
}

/** A listed session in `ps --json`: the meta.json field names (snake_case), plus the live status. */
function toJson(session: MonitoredSession): Record<string, unknown> {
  return {
    id: session.id,
    status: session.status,
    recorded_status: session.recordedStatus,
    ...(session.deadReason === undefined ? {} : { dead_reason: session.deadReason }),
    ...(session.problem === undefined ? {} : { problem: session.problem }),
    model: session.model ?? null,
    profile: session.profile ?? null,
    started_at: session.startedAt,
    updated_at: session.updatedAt ?? null,
    heartbeat_at: session.heartbeatAt ?? null,
    pid: session.pid ?? null,
    hostname: session.hostname ?? null,
    first_prompt: session.firstPrompt ?? null,
    cost_usd: session.costUsd ?? null,
    parent_id: session.parentId ?? null,
    directory: session.directory,
  };
}

/** `watch`: renders the session's events until its run ends (or forever with `follow`), or until `signal` aborts. */
export async function watchAction(
  directory: string,
  prefix: string,
  options: { json: boolean; follow: boolean; fromStart: boolean; signal?: AbortSignal },
  io: MonitorIo,
): Promise<number> {
  const target = new SessionStore(directory).lookup(prefix);
  const width = (io.terminal.stdout as { columns?: number }).columns ?? 120;
  const replay = (write: (text: string) => void) => {
    const renderer = createEventRenderer({ mode: 'replay', out: write, color: io.color, width });
    return (record: RawTraceRecord) => {
      if (isKnownRecord(record)) renderer(record);
    };
  };
  const render = options.json ? (record: object) => io.out(`${JSON.stringify(record)}\n`) : replay(io.out);
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
  if (!options.json) io.err(`Watching ${target.id} (Ctrl+C stops watching; the agent keeps running)\n`);
  for await (const { record, childId } of watchWithChildren(directory, target, {
    fromStart: options.fromStart,
    follow: options.follow,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
  })) {
    if (childId === undefined) render(record);
    else renderChild(childId, record);
  }
  if (options.signal?.aborted === true) {
    if (!options.json) io.err('Stopped watching.\n');
    return EXIT.completed;
  }
  const session = readMonitoredSession(target.directory, {}, false);
  if (!options.json)
    io.err(
      `Session ${target.id} ${session?.status === 'dead' ? `is dead: ${session.deadReason ?? 'its process is gone'}` : `ended (${session?.status ?? 'unknown'})`}\n`,
    );
  return EXIT.completed;
}

/** Which control request. */
export type ControlKind = 'cancel' | 'pause' | 'resume';

/**
 * `cancel`, `pause`, `resume` for one session (a unique prefix) or `all`. Cancel and pause only
 * reach live sessions (running, paused, waiting for approval): a sentinel left in a finished
 * session would stop or hold its next resume. Resume removes a pause wherever it is.
 */
export async function controlAction(
  kind: ControlKind,
  directory: string,
  target: { prefix?: string; all: boolean },
  io: MonitorIo,
): Promise<number> {
  if (target.all && target.prefix !== undefined && target.prefix !== 'all')
    throw new UsageError({ message: `Give either a session prefix or --all, not both.` });
  const all = target.all || target.prefix === 'all';
  if (!all && (target.prefix === undefined || target.prefix === ''))
    throw new UsageError({ message: `Give a session id prefix, or use --all (rho ps lists the sessions).` });
  const store = new SessionStore(directory);
  const targets = all ? store.match('') : [store.lookup(target.prefix!)];
  const act = (operator: FileOperatorChannel) =>
    kind === 'cancel'
      ? operator.requestCancel()
      : kind === 'pause'
        ? operator.requestPause()
        : operator.requestResume();
  let changed = 0;
  for (const { id, directory: sessionDirectory } of targets) {
    const session = readMonitoredSession(sessionDirectory, {}, false);
    // A session still being set up (its tools, MCP servers, starting) is live too while the
    // process that holds its lock is: a cancel stops it before its first model call.
    const live =
      session !== undefined &&
      (ACTIVE_STATUSES.has(session.status) ||
        (session.status === 'created' && sessionLockOwner(sessionDirectory) !== undefined));
    if (kind !== 'resume' && !live) {
      if (!all) io.out(`${id}: ${session?.status ?? 'unknown'}, not running; nothing to ${kind}\n`);
      continue;
    }
    const outcome = await act(new FileOperatorChannel(sessionDirectory));
    if (outcome === 'requested') {
      changed += 1;
      io.out(`${kind}: ${id}\n`);
    } else if (!all) {
      io.out(
        kind === 'resume'
          ? `${id}: not paused (${session?.status ?? 'unknown'}); nothing to unpause.${live ? '' : ` To continue it with a new task: rho --resume ${id} "task"`}\n`
          : `${id}: ${kind} already requested\n`,
      );
    }
  }
  if (all) {
    const noun = kind === 'resume' ? 'paused sessions to resume' : `running sessions to ${kind}`;
    io.out(changed === 0 ? `No ${noun}\n` : `Sent ${kind} to ${changed} session${changed === 1 ? '' : 's'}\n`);
  }
  return EXIT.completed;
}

/** `directive`: queues an instruction for one session; it reaches the model before its next call. */
export async function directiveAction(directory: string, prefix: string, text: string, io: MonitorIo): Promise<number> {
  if (text.trim() === '')
    throw new UsageError({ message: 'The directive is empty: rho directive PREFIX "what the agent should do".' });
  const target = new SessionStore(directory).lookup(prefix);
  await new FileOperatorChannel(target.directory).sendDirective(text);
  const session = readMonitoredSession(target.directory, {}, false);
  const live = session !== undefined && ACTIVE_STATUSES.has(session.status);
  io.out(
    live
      ? `directive queued for ${target.id}\n`
      : `directive queued for ${target.id} (${session?.status ?? 'unknown'}: it is delivered when the session is resumed)\n`,
  );
  return EXIT.completed;
}
