import { Readable } from 'node:stream';
import type { BackendProcess, ExecutionBackend, ProcessExit, ReadHandle } from '@rho/core';
import type { ShellCommand, ShellPlan } from '@rho/permissions';
import type { OutputCollector } from './output-collector.js';
import { drain } from './run-process.js';
import type { ProcessSupervisor } from './supervisor.js';

/** One command of a checked plan: `ShellCommand` of `@rho/permissions`, which owns the shape. */
export type PlanCommand = ShellCommand;

/** A checked shell command as steps of pipelines: `ShellPlan` of `@rho/permissions`. */
export type Plan = ShellPlan;

/** Where and how the plan's processes run. */
export interface PlanEnvironment {
  /** Where the processes run. */
  backend: ExecutionBackend;
  /** Working directory of every process. */
  cwd: string;
  /** Complete environment of every process (before per-command variables). */
  env: Record<string, string | undefined>;
  /** The argv to spawn for each command (the command inside its own OS sandbox), if not its own argv. */
  wrap?: (command: PlanCommand) => string[];
  /** Told how every process of the plan ended, as each ends. */
  onExit?: (exit: ProcessExit) => void;
}

const SIGNAL_NUMBERS: Record<string, number> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGKILL: 9,
  SIGPIPE: 13,
  SIGTERM: 15,
};

/**
 * Runs a checked plan without a shell: each pipeline's processes are spawned with their pipes
 * wired by the backend, `&&` / `||` / `;` follow the exit status of the last pipeline as in bash,
 * and the allowed redirections (`>/dev/null`, `2>/dev/null`, `2>&1`) are applied.
 * Resolves the exit status of the last pipeline that ran (128 + signal number when killed, 127
 * when a program is missing).
 */
export async function runPlan(
  plan: Plan,
  environment: PlanEnvironment,
  output: { stdout: OutputCollector; stderr: OutputCollector },
  supervisor: ProcessSupervisor,
): Promise<number> {
  let status = 0;
  for (const step of plan.steps) {
    if (supervisor.reason !== undefined) break;
    if (step.operator === '&&' && status !== 0) continue;
    if (step.operator === '||' && status === 0) continue;
    status = await runPipeline(step.pipeline, environment, output, supervisor);
  }
  return status;
}

async function runPipeline(
  pipeline: PlanCommand[],
  environment: PlanEnvironment,
  output: { stdout: OutputCollector; stderr: OutputCollector },
  supervisor: ProcessSupervisor,
): Promise<number> {
  const children: BackendProcess[] = [];
  const readers: Promise<void>[] = [];
  let previous: Readable | 'ignore' = 'ignore';
  for (const [index, command] of pipeline.entries()) {
    const last = index === pipeline.length - 1;
    const argv = environment.wrap ? environment.wrap(command) : command.argv;
    // `< FILE`, `<<<` and `<<EOF` replace the pipe (bash closes it too: the previous command gets SIGPIPE).
    const stdin = command.stdin ? stdinOf(command.stdin, environment.backend) : previous;
    if (command.stdin && previous !== 'ignore') previous.destroy();
    const child = environment.backend.spawn({
      argv,
      cwd: environment.cwd,
      env: command.env ? { ...environment.env, ...command.env } : environment.env,
      stdin,
      stdout: command.stdoutToDevNull ? 'ignore' : 'pipe',
      stderr: command.stderrToDevNull ? 'ignore' : command.stderrToStdout ? 'stdout' : 'pipe',
    });
    supervisor.track(child);
    children.push(child);
    readers.push(drain(child.stderr, (chunk) => output.stderr.push(chunk)));
    if (last) {
      readers.push(drain(child.stdout, (chunk) => output.stdout.push(chunk)));
    }
    previous = child.stdout ?? 'ignore';
  }
  const exits = await Promise.all(
    children.map((child) =>
      child.exited.then((exit) => {
        environment.onExit?.(exit);
        return exit;
      }),
    ),
  );
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(readers),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, 2000);
    }),
  ]);
  clearTimeout(timer);
  for (const child of children) {
    child.stdout?.destroy();
    child.stderr?.destroy();
  }
  for (const [index, exit] of exits.entries()) {
    if (exit.spawnError) {
      const program = pipeline[index]?.argv[0] ?? '';
      output.stderr.push(Buffer.from(`${program}: ${spawnErrorText(exit)}\n`));
    }
  }
  const lastExit = exits.at(-1);
  return lastExit === undefined ? 0 : statusOf(lastExit);
}

/**
 * A command's own standard input: the file the policy resolved (opened now, read-only, on the
 * backend the command runs on: the backend's file, whatever the backend), or literal text.
 */
function stdinOf(source: NonNullable<PlanCommand['stdin']>, backend: ExecutionBackend): Readable {
  return 'file' in source ? backendFileStream(backend, source.file) : Readable.from([Buffer.from(source.text)]);
}

/** A file of the backend as a stream, read through its positional reads. */
function backendFileStream(backend: ExecutionBackend, path: string): Readable {
  let handle: ReadHandle | undefined;
  let position = 0;
  return new Readable({
    construct(callback) {
      backend.openRead(path).then(
        (opened) => {
          handle = opened;
          callback();
        },
        (error: Error) => callback(error),
      );
    },
    read(size) {
      const buffer = new Uint8Array(Math.max(size, 64 * 1024));
      handle!.read(buffer, position, buffer.byteLength).then(
        (count) => {
          position += count;
          this.push(count === 0 ? null : buffer.subarray(0, count));
        },
        (error: Error) => this.destroy(error),
      );
    },
    destroy(error, callback) {
      const opened = handle;
      handle = undefined;
      if (opened === undefined) return callback(error);
      opened.close().then(
        () => callback(error),
        () => callback(error),
      );
    },
  });
}

function spawnErrorText(exit: ProcessExit): string {
  return exit.spawnError?.code === 'ENOENT'
    ? 'command not found'
    : (exit.spawnError?.message ?? 'could not be started');
}

/** The status bash would report for an exit. */
export function statusOf(exit: ProcessExit): number {
  if (exit.spawnError) return exit.spawnError.code === 'ENOENT' ? 127 : 126;
  if (exit.exitCode !== null) return exit.exitCode;
  return 128 + (SIGNAL_NUMBERS[exit.signal ?? ''] ?? 0);
}
