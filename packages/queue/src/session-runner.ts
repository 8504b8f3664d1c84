import { spawn } from 'node:child_process';
import type { TaskApprovalWait } from './task-approvals.js';
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
  /**
   * How the task's calls that need approval wait (a task with `auto_approve: false`): bounded by
   * the worker's longest wait and the task's deadline.
   */
  approvals?: TaskApprovalWait;
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
  /**
   * `cancel` asks the session to stop (it keeps its trace; a call waiting for approval is ended
   * with it, not parked); `kill` ends its process at once.
   */
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
 * The `rho` arguments that run a task: prompt, profile, config, model, working directory, workspace,
 * budgets, approvals. An eval question (`sql_eval`) runs as `rho eval sql-task --task JSON` instead, which
 * runs it as `rho eval sql` runs a question.
 */
export function sessionArguments(spec: TaskSpec, approvals?: TaskApprovalWait): string[] {
  if (spec.sql_eval !== undefined) return ['eval', 'sql-task', '--task', JSON.stringify(spec)];
  const args = ['--json', '-p', spec.prompt];
  const add = (flag: string, value: string | number | undefined) => {
    if (value !== undefined) args.push(flag, String(value));
  };
  add('--profile', spec.profile);
  add('--config', spec.config);
  add('--model', spec.model);
  add('--working-dir', spec.working_dir);
  // The worker makes the mode explicit (its default for the profile) before it runs the task.
  add('--workspace', spec.workspace);
  add('--max-turns', spec.max_turns);
  add('--max-tokens', spec.max_tokens);
  add('--max-cost', spec.max_cost);
  // Tool calls the profile leaves to approval are approved unless the task says otherwise; then
  // such a call waits for an answer from any node (rho approve / rho deny) while the worker holds
  // the task, as long as the worker computed (its longest wait, cut short before the deadline).
  if (spec.auto_approve !== false) args.push('--auto-approve');
  else if (approvals !== undefined)
    args.push(
      '--when-unattended',
      'wait',
      '--approval-timeout',
      `${Math.max(1, Math.floor(approvals.timeoutMs / 1000))}s`,
      '--on-timeout',
      approvals.onTimeout,
    );
  return args;
}

/**
 * A runner that starts each task as its own `rho --json` process, so a session that crashes never
 * takes the worker down, and the session is a normal one: trace, fleet registration when
 * configured, `rho watch`/`rho cancel`. The process gets `RHO_TASK_ID` and `RHO_TASK_ATTEMPT`
 * (recorded in the trace's `run_start`) and `RHO_TASK_LABELS` (its labels in the fleet). Its JSON events give the session id, answer and usage.
 */
export function createCliSessionRunner(options: CliSessionRunnerOptions): TaskRunner {
  const [command, ...prefix] = options.command;
  if (command === undefined) throw new TypeError('createCliSessionRunner: command is empty');
  return (task, hooks) => {
    const args = sessionArguments(task.spec, task.approvals);
    const child = spawn(command, [...prefix, ...(options.extraArgs ?? []), ...args], {
      cwd: options.cwd ?? process.cwd(),
      env: {
        ...(options.env ?? process.env),
        RHO_TASK_ID: task.id,
        RHO_TASK_ATTEMPT: String(task.attempt),
        // Always set, so a worker's own environment never gives a task labels it does not carry.
        RHO_TASK_LABELS: (task.spec.labels ?? []).join(','),
        ...(task.lease === undefined
          ? {}
          : { RHO_TASK_LEASE_FILE: task.lease.file, RHO_TASK_LEASE_SECONDS: String(task.lease.seconds) }),
        ...(task.approvals === undefined ? {} : { RHO_TASK_APPROVAL_DEADLINE: task.approvals.deadline }),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const outcome: TaskResult = { status: 'crashed', attempt: task.attempt };
    let buffer = '';
    let stderr = '';
    // Calls waiting for approval (a parked session names the one it waits on), and why calls were refused.
    const waiting = new Map<string, NonNullable<TaskResult['pending_approval']>>();
    const refusals: string[] = [];
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
      } else if (event.type === 'approval_requested' && typeof event.tool_call_id === 'string') {
        waiting.set(event.tool_call_id, {
          tool_call_id: event.tool_call_id,
          tool_name: String(event.tool_name),
          ...(typeof event.expires_at === 'string' ? { expires_at: event.expires_at } : {}),
        });
      } else if (event.type === 'approval_answered' && typeof event.tool_call_id === 'string') {
        waiting.delete(event.tool_call_id);
      } else if (event.type === 'tool_blocked' && typeof event.reason === 'string') {
        refusals.push(`${String(event.tool_name)}: ${event.reason}`);
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
        if (outcome.status === 'waiting_approval' && waiting.size > 0)
          outcome.pending_approval = [...waiting.values()][0]!;
        if (outcome.status === 'refused' && outcome.error === undefined && refusals.length > 0)
          outcome.error = `every tool call the session asked for was refused: ${refusals.join('; ')}`;
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
        // SIGINT cancels the run, also while a call waits for approval (SIGTERM would park it:
        // a session the task no longer owns must not wait to be resumed beside the next attempt).
        if (child.exitCode === null && child.signalCode === null) child.kill(how === 'cancel' ? 'SIGINT' : 'SIGKILL');
      },
    };
  };
}
