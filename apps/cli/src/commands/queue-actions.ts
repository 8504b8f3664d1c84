import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { rhoHome } from '@rho/core';
import type { TaskQueue, TaskRecord, TaskSpec, TaskState } from '@rho/queue';
import { EXIT, UsageError } from '../exit-codes.js';
import type { Terminal } from '../terminal.js';
import type { QueueConnectionArguments, ResultsArguments, SubmitArguments, TasksArguments } from './queue-commands.js';
import { taskChangeLines } from './task-changes.js';

const STATES: readonly TaskState[] = ['queued', 'running', 'done', 'failed', 'cancelled', 'expired'];

/**
 * Where the queue lives: the fleet's PostgreSQL, as `@rho/fleet` resolves it (`--fleet`,
 * `RHO_FLEET_URL`, `fleet.url` in `$RHO_HOME/config.yaml`, with `${ENV}` references); its schema
 * from `--queue-schema` or `RHO_QUEUE_SCHEMA` (default `rho_queue`). The fleet's `ssl` mapping is
 * for its own driver: the queue's (pg) takes TLS from the url (`?sslmode=require`).
 */
export async function queueConnection(
  argv: QueueConnectionArguments,
  env: NodeJS.ProcessEnv,
): Promise<{ url: string; schema?: string; fromFlag: boolean }> {
  const [{ resolveSettings }, { fleetSettingsSection }, { allSections }] = await Promise.all([
    import('@rho/core/settings'),
    import('@rho/fleet/settings'),
    import('../settings.js'),
  ]);
  const { fleet: settings } = (
    await resolveSettings({
      sections: [fleetSettingsSection],
      knownSections: allSections,
      home: rhoHome(env),
      env,
      overrides: argv.fleet === undefined ? {} : { fleet: argv.fleet },
    })
  ).settings;
  const fleet = settings.config;
  if (fleet === undefined) {
    throw new UsageError({
      message:
        'No queue database: the queue lives in the fleet\'s PostgreSQL. Pass --fleet postgres://user@host/db, set RHO_FLEET_URL, or add "fleet: {url: ...}" to $RHO_HOME/config.yaml.',
    });
  }
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
  const schema = text(argv.queueSchema) ?? text(env.RHO_QUEUE_SCHEMA);
  return { url: fleet.url, ...(schema === undefined ? {} : { schema }), fromFlag: fleet.source === 'flag' };
}

/**
 * Opens the queue. `create: false` for commands that only look or cancel: they never make the
 * schema, and return undefined when there is no queue there yet.
 */
export async function openQueue(argv: QueueConnectionArguments, env: NodeJS.ProcessEnv): Promise<TaskQueue>;
export async function openQueue(
  argv: QueueConnectionArguments,
  env: NodeJS.ProcessEnv,
  options: { create: false },
): Promise<TaskQueue | undefined>;
export async function openQueue(
  argv: QueueConnectionArguments,
  env: NodeJS.ProcessEnv,
  options: { create?: boolean } = {},
): Promise<TaskQueue | undefined> {
  const { createTaskQueue, QueueNotFoundError } = await import('@rho/queue');
  const { url, schema } = await queueConnection(argv, env);
  try {
    return await createTaskQueue({
      url,
      ...(schema === undefined ? {} : { schema }),
      ...leaseFrom(undefined, env),
      ...(options.create === false ? { create: false } : {}),
    });
  } catch (error) {
    if (options.create === false && QueueNotFoundError.isInstance(error)) return undefined;
    throw error;
  }
}

export function leaseFrom(flag: number | undefined, env: NodeJS.ProcessEnv): { leaseSeconds?: number } {
  const value = flag ?? (env.RHO_QUEUE_LEASE === undefined ? undefined : Number(env.RHO_QUEUE_LEASE));
  if (value === undefined) return {};
  if (!Number.isFinite(value) || value < 10)
    throw new UsageError({
      message: `The lease must be a number of seconds, at least 10 (got ${String(value)}): pg-boss's job heartbeat allows no shorter.`,
    });
  return { leaseSeconds: value };
}

/** `rho submit`: one task from the arguments, or every line of `--file`. */
export async function submitAction(argv: SubmitArguments, terminal: Terminal, env: NodeJS.ProcessEnv): Promise<number> {
  const { parseTaskFile, parseTaskSpec } = await import('@rho/queue');
  const prompt = (argv.prompt ?? []).join(' ').trim();
  const fromFlags: Record<string, unknown> = {
    profile: argv.profile,
    config: argv.config,
    model: argv.model,
    working_dir: argv.workingDir,
    labels: argv.label,
    priority: argv.priority,
    max_turns: argv.maxTurns,
    max_tokens: argv.maxTokens,
    max_cost: argv.maxCost,
    deadline: argv.deadline,
    max_attempts: argv.maxAttempts,
    ...(argv.autoApprove === false ? { auto_approve: false } : {}),
    approval_timeout: argv.approvalTimeout,
    on_timeout: argv.onTimeout,
    workspace: argv.workspace,
  };
  let tasks: TaskSpec[];
  if (argv.file !== undefined) {
    if (prompt !== '') throw new UsageError({ message: 'Give a prompt or --file, not both.' });
    let text: string;
    try {
      text = argv.file === '-' ? readFileSync(0, 'utf8') : readFileSync(resolve(argv.file), 'utf8');
    } catch (error) {
      throw new UsageError({ message: `Cannot read ${argv.file}: ${(error as Error).message}` });
    }
    // Flags are defaults for every line; a line's own fields win, and --label adds to its labels.
    const defaults = Object.fromEntries(Object.entries(fromFlags).filter(([, value]) => value !== undefined));
    tasks = parseTaskFile(text, argv.file).map((task, index) =>
      parseTaskSpec(
        { ...defaults, ...task, labels: [...(argv.label ?? []), ...(task.labels ?? [])] },
        `${argv.file}:${index + 1}`,
      ),
    );
  } else {
    if (prompt === '')
      throw new UsageError({ message: 'Nothing to submit: give a prompt (rho submit "task") or --file tasks.jsonl.' });
    tasks = [parseTaskSpec({ ...fromFlags, prompt }, 'rho submit')];
  }
  const queue = await openQueue(argv, env);
  try {
    const ids = await queue.submit(tasks);
    terminal.stdout.write(argv.json ? `${JSON.stringify(ids)}\n` : `${ids.join('\n')}\n`);
    if (!argv.json)
      terminal.stderr.write(`Submitted ${ids.length} task${ids.length === 1 ? '' : 's'}. Follow with: rho tasks\n`);
    return EXIT.completed;
  } finally {
    await queue.close();
  }
}

function checkStates(states: readonly string[] | undefined): TaskState[] | undefined {
  if (states === undefined) return undefined;
  for (const state of states)
    if (!STATES.includes(state as TaskState))
      throw new UsageError({ message: `Unknown task state '${state}': use ${STATES.join(', ')}.` });
  return states as TaskState[];
}

/**
 * `rho cancel ID` where ID names no session in the fleet: cancels the queued or running task with
 * that id or prefix (a running task's worker stops its session). `'none'` when no task matches
 * (or there is no queue: it is never created here), undefined when the queue cannot be reached,
 * so the caller reports what it did not find.
 */
export async function cancelTaskInstead(
  prefix: string,
  argv: QueueConnectionArguments,
  env: NodeJS.ProcessEnv,
  out: (text: string) => void,
): Promise<number | 'none' | undefined> {
  const { TaskNotFoundError } = await import('@rho/queue');
  let queue: TaskQueue | undefined;
  try {
    queue = await openQueue(argv, env, { create: false });
  } catch {
    return undefined;
  }
  if (queue === undefined) return 'none';
  try {
    const task = await queue.cancel(prefix);
    out(
      task.state === 'cancelled'
        ? `cancel: task ${task.id}${task.host === undefined ? '' : ` (was running on ${task.host})`}\n`
        : `task ${task.id}: already ${task.state}, left as it is\n`,
    );
    return EXIT.completed;
  } catch (error) {
    if (error instanceof TaskNotFoundError && error.message.startsWith('No task')) return 'none';
    throw error;
  } finally {
    await queue.close().catch(() => {});
  }
}

/** `rho tasks [IDS]` lists tasks; `rho tasks cancel ID...` cancels them. */
export async function tasksAction(argv: TasksArguments, terminal: Terminal, env: NodeJS.ProcessEnv): Promise<number> {
  const [first, ...rest] = argv.args ?? [];
  if (first === 'roles') return tasksRolesAction(argv, terminal, env);
  const states = checkStates(argv.state);
  const queue = await openQueue(argv, env, { create: false });
  if (queue === undefined) {
    // Nothing was ever submitted to this database: looking does not create the queue.
    if (first === 'cancel') {
      const { TaskNotFoundError } = await import('@rho/queue');
      throw new TaskNotFoundError({ message: `No task with id '${rest[0] ?? ''}': no task was ever submitted here.` });
    }
    if (argv.json) terminal.stdout.write('[]\n');
    else terminal.stderr.write('No tasks. Queue one with: rho submit "task"\n');
    return EXIT.completed;
  }
  try {
    if (first === 'cancel') {
      if (rest.length === 0) throw new UsageError({ message: 'Which task? Use: rho tasks cancel ID' });
      const cancelled: TaskRecord[] = [];
      for (const id of rest) cancelled.push(await queue.cancel(id));
      if (argv.json) terminal.stdout.write(`${JSON.stringify(cancelled, null, 2)}\n`);
      else
        for (const task of cancelled)
          terminal.stdout.write(
            task.state === 'cancelled'
              ? `${task.id}: cancelled${task.host === undefined ? '' : ` (was running on ${task.host})`}\n`
              : `${task.id}: already ${task.state}, left as it is\n`,
          );
      return EXIT.completed;
    }
    const ids = first === undefined ? [] : [first, ...rest];
    const limit = argv.limit ?? (argv.json ? undefined : 50);
    const tasks = await queue.list({
      ids,
      ...(argv.label === undefined ? {} : { labels: argv.label }),
      ...(states === undefined ? {} : { states }),
      ...(limit === undefined ? {} : { limit }),
    });
    if (argv.json) {
      terminal.stdout.write(`${JSON.stringify(tasks, null, 2)}\n`);
      return EXIT.completed;
    }
    if (tasks.length === 0) {
      terminal.stderr.write('No tasks. Queue one with: rho submit "task"\n');
      return EXIT.completed;
    }
    const rows = tasks.map((task) => [
      task.id.slice(0, 8),
      task.state === 'running' ? `running on ${task.host ?? '?'}` : shownState(task),
      String(task.attempt),
      String(task.priority),
      task.labels.join(',') || '-',
      task.session_id?.slice(0, 8) ?? '-',
      oneLine(task.spec.prompt, 40),
    ]);
    terminal.stdout.write(table(['ID', 'STATE', 'TRY', 'PRIO', 'LABELS', 'SESSION', 'PROMPT'], rows));
    // Why a worker refused a task is what its submitter needs to change: said in full.
    // So is how to answer a parked one.
    for (const task of tasks)
      if (task.result?.status === 'refused' || task.result?.status === 'waiting_approval')
        terminal.stdout.write(`${task.id.slice(0, 8)}: ${task.result.error ?? task.result.status}\n`);
    // What an isolated task changed, and the command that shows it on its host.
    for (const line of await taskChangeLines(tasks)) terminal.stdout.write(line);
    return EXIT.completed;
  } finally {
    await queue.close();
  }
}

/**
 * `rho tasks roles`: the GRANT script of the queue's submitter and worker roles for the configured
 * schema, to run as the schema's owner. Needs no connection.
 */
async function tasksRolesAction(argv: TasksArguments, terminal: Terminal, env: NodeJS.ProcessEnv): Promise<number> {
  const { queueRolesSql } = await import('@rho/queue');
  const text = (value: unknown) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined);
  const schema = text(argv.queueSchema) ?? text(env.RHO_QUEUE_SCHEMA);
  let sql: string;
  try {
    sql = queueRolesSql({
      ...(schema === undefined ? {} : { schema }),
      ...(argv.submitterRole === undefined ? {} : { submitterRole: argv.submitterRole }),
      ...(argv.workerRole === undefined ? {} : { workerRole: argv.workerRole }),
    });
  } catch (error) {
    throw new UsageError({
      message: `${(error as Error).message.replace(/\.$/, '')} (--submitter-role, --worker-role, --queue-schema).`,
    });
  }
  terminal.stdout.write(sql);
  return EXIT.completed;
}

/** `rho results`: answers and statuses; `--wait` until every selected task is final. */
export async function resultsAction(
  argv: ResultsArguments,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const queue = await openQueue(argv, env, { create: false });
  if (queue === undefined) {
    if (!argv.json) terminal.stdout.write(table(['ID', 'STATE', 'HOST', 'COST', 'ANSWER'], []));
    return EXIT.completed;
  }
  try {
    const filter = { ids: argv.ids ?? [], ...(argv.label === undefined ? {} : { labels: argv.label }) };
    let tasks = await queue.list(filter);
    const { isTransientDatabaseError } = await import('@rho/fleet');
    let lost = false;
    while (argv.wait && tasks.some((task) => task.state === 'queued' || task.state === 'running')) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      try {
        tasks = await queue.list(filter);
        if (lost) terminal.stderr.write("The queue's database answers again; waiting on.\n");
        lost = false;
      } catch (error) {
        // A restart of the database is waited out: --wait waits for the tasks, whatever happens between.
        if (!isTransientDatabaseError(error)) throw error;
        if (!lost)
          terminal.stderr.write(
            `The queue's database went away (${error instanceof Error ? error.message : String(error)}); waiting for it to answer again (Ctrl+C stops waiting).\n`,
          );
        lost = true;
      }
    }
    tasks.reverse();
    if (argv.json) {
      for (const task of tasks)
        terminal.stdout.write(
          `${JSON.stringify({
            id: task.id,
            state: task.state,
            labels: task.labels,
            attempt: task.attempt,
            host: task.host ?? null,
            session_id: task.session_id ?? null,
            prompt: task.spec.prompt,
            ...(task.result ?? {}),
          })}\n`,
        );
      return EXIT.completed;
    }
    const rows = tasks.map((task) => [
      task.id.slice(0, 8),
      shownState(task),
      task.host ?? '-',
      task.result?.cost_usd === undefined ? '-' : `$${task.result.cost_usd.toFixed(4)}`,
      oneLine(task.result?.answer ?? task.result?.error ?? '', 60),
    ]);
    terminal.stdout.write(table(['ID', 'STATE', 'HOST', 'COST', 'ANSWER'], rows));
    for (const line of await taskChangeLines(tasks)) terminal.stdout.write(line);
    return EXIT.completed;
  } finally {
    await queue.close();
  }
}

/**
 * A task's state for a table: `refused` for a task its worker would not run or whose every tool
 * call was refused, `parked` for one whose session stopped while a call waited for approval (both
 * are `failed`).
 */
function shownState(task: TaskRecord): string {
  if (task.state !== 'failed') return task.state;
  return task.result?.status === 'refused'
    ? 'refused'
    : task.result?.status === 'waiting_approval'
      ? 'parked'
      : 'failed';
}

export function oneLine(text: string, width: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return `${[line(headers), ...rows.map(line)].join('\n')}\n`;
}
