import { spawn } from 'node:child_process';
import type { TaskSpec } from './task-spec.js';
import type { TaskResult } from './task-types.js';

/** A task handed to a runner: what to run and which attempt this is. */
export interface RunnableTask {
  /** The task id. */
  id: string;
  /** The attempt, from 1. */
  attempt: number;
  /** What was submitted. */
  spec: TaskSpec;
  /**
   * The attempt's lease as the session can see it without the database: a file whose modification
   * time is the last renewal the worker confirmed. The session stops itself when the file is older
   * than {@link LEASE_LAPSE_FRACTION} of `seconds` (or gone), before another attempt can start, even
   * when the worker is frozen and cannot stop it.
   */
  lease?: { file: string; seconds: number };
}

/**
 * A session stops itself once its lease file is older than this fraction of the lease: two
 * heartbeats (one every third of the lease) were missed, and the job expires at the full lease.
 */
export const LEASE_LAPSE_FRACTION = 0.8;

/** A session started for a task. */
export interface RunningSession {
  /** Settles when the session has ended (never rejects). */
  result: Promise<TaskResult>;
  /** `cancel` asks the session to stop (it keeps its trace); `kill` ends its process at once. */
  stop(how: 'cancel' | 'kill'): void;
}

/** Runs one task as a session; `onSession` learns the session id as soon as it is known. */
export type TaskRunner = (task: RunnableTask, hooks: { onSession(sessionId: string): void }) => RunningSession;

/** Options of {@link createCliSessionRunner}. */
export interface CliSessionRunnerOptions {
  /** The command that starts rho, for example `[process.execPath, '/path/to/rho/dist/bin.js']`. */
  command: readonly string[];
  /** Environment of every session (the worker's own by default); the task id and attempt are added. */
  env?: NodeJS.ProcessEnv;
  /** Working directory when the task names none (default the worker's). */
  cwd?: string;
  /** Arguments added before the task's own (for example `--base-url`). */
  extraArgs?: readonly string[];
}

/**
 * The `rho` arguments that run a task: prompt, profile, config, model, working directory, budgets.
 * An eval question (`sql_eval`) runs as `rho eval sql-task --task JSON` instead, which runs it as
 * `rho eval sql` runs a question.
 */
export function sessionArguments(spec: TaskSpec): string[] {
  if (spec.sql_eval !== undefined) return ['eval', 'sql-task', '--task', JSON.stringify(spec)];
  const args = ['--json', '-p', spec.prompt];
  const add = (flag: string, value: string | number | undefined) => {
    if (value !== undefined) args.push(flag, String(value));
  };
  add('--profile', spec.profile);
  add('--config', spec.config);
  add('--model', spec.model);
  add('--working-dir', spec.working_dir);
  add('--max-turns', spec.max_turns);
  add('--max-tokens', spec.max_tokens);
  add('--max-cost', spec.max_cost);
  // A worker has nobody to ask: tool calls the profile leaves to approval are approved unless
  // the task says otherwise (then those tools are not offered).
  if (spec.auto_approve !== false) args.push('--auto-approve');
  return args;
}

/**
 * A runner that starts each task as its own `rho --json` process, so a session that crashes never
 * takes the worker down, and the session is a normal one: trace, fleet registration when
 * configured, `rho watch`/`rho cancel`. The process gets `RHO_TASK_ID` and `RHO_TASK_ATTEMPT`
 * (recorded in the trace's `run_start`). Its JSON events give the session id, answer and usage.
 */
export function createCliSessionRunner(options: CliSessionRunnerOptions): TaskRunner {
  const [command, ...prefix] = options.command;
  if (command === undefined) throw new TypeError('createCliSessionRunner: command is empty');
  return (task, hooks) => {
    const child = spawn(command, [...prefix, ...(options.extraArgs ?? []), ...sessionArguments(task.spec)], {
      cwd: options.cwd ?? process.cwd(),
      env: {
        ...(options.env ?? process.env),
        RHO_TASK_ID: task.id,
        RHO_TASK_ATTEMPT: String(task.attempt),
        ...(task.lease === undefined
          ? {}
          : { RHO_TASK_LEASE_FILE: task.lease.file, RHO_TASK_LEASE_SECONDS: String(task.lease.seconds) }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const outcome: TaskResult = { status: 'crashed', attempt: task.attempt };
    let buffer = '';
    let stderr = '';
    const onLine = (line: string) => {
      let event: Record<string, unknown>;
      try {
        event = JSON.parse(line) as Record<string, unknown>;
      } catch {
        return;
      }
      if (event.type === 'run_start' && typeof event.session_id === 'string') {
        outcome.session_id = event.session_id;
        hooks.onSession(event.session_id);
      } else if (event.type === 'message' && event.role === 'assistant' && typeof event.content === 'string') {
        outcome.answer = event.content;
      } else if (event.type === 'run_end') {
        if (typeof event.status === 'string') outcome.status = event.status;
        const usage = event.usage as Record<string, unknown> | undefined;
        if (usage !== undefined && typeof usage === 'object') {
          outcome.usage = Object.fromEntries(
            Object.entries(usage).filter((entry): entry is [string, number] => typeof entry[1] === 'number'),
          );
          if (typeof usage.cost_usd === 'number') outcome.cost_usd = usage.cost_usd;
        }
      } else if (event.type === 'task_output' && 'output' in event) {
        outcome.output = event.output;
      } else if (event.type === 'error' && typeof event.content === 'string') {
        outcome.error = event.content;
      }
    };
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) onLine(line);
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    const result = new Promise<TaskResult>((resolve) => {
      child.on('error', (error) => {
        outcome.error = `could not start rho: ${error.message}`;
        resolve(outcome);
      });
      child.on('close', (code, signal) => {
        if (buffer !== '') onLine(buffer);
        outcome.exit_code = code;
        if (outcome.status === 'crashed' || code !== 0) {
          const said = stderr.trim().split('\n').slice(-3).join(' ').trim();
          if (outcome.error === undefined && said !== '') outcome.error = said;
          if (outcome.error === undefined && signal !== null) outcome.error = `the session was killed (${signal})`;
        }
        resolve(outcome);
      });
    });
    return {
      result,
      stop(how) {
        if (child.exitCode === null && child.signalCode === null) child.kill(how === 'cancel' ? 'SIGTERM' : 'SIGKILL');
      },
    };
  };
}
