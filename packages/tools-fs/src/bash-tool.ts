import { defineTool, type ExecutionBackend, type ProcessExit, type ToolResult } from '@rho/core';
import { OutputCollector } from './internal/output-collector.js';
import { backendOf, errorMessage, resolvePath } from './internal/paths.js';
import { runPlan, statusOf, type Plan, type PlanCommand } from './internal/plan-runner.js';
import { failure } from './internal/result.js';
import { runProcess } from './internal/run-process.js';
import { ProcessSupervisor } from './internal/supervisor.js';

/** Bytes kept from the start and from the end of each of stdout and stderr. */
export const BASH_OUTPUT_HEAD_BYTES = 8000;
/** Bytes kept from the end of each of stdout and stderr. */
export const BASH_OUTPUT_TAIL_BYTES = 8000;

/**
 * Decides whether a restricted command may run and how (see `restrictedShellGate`): either a
 * refusal whose `reason` the model reads, or the plan to execute with its environment and an
 * optional rewrite of each command's argv (the OS sandbox, which can differ per command: only a
 * network program gets the network).
 */
export type ShellGate = (
  command: string,
  cwd: string,
  /** The backend the command runs on: one that is not local is checked on its own file system. */
  backend?: ExecutionBackend,
) => Promise<
  | {
      allowed: true;
      plan: Plan;
      env: Record<string, string | undefined>;
      wrap?: (command: PlanCommand, cwd: string) => string[];
      /** The resource limits of the run (`SandboxLimitRun` of `@rho/permissions`): what was reached, then released. */
      limits?: ShellRunLimits;
    }
  | { allowed: false; reason: string }
>;

/** The resource limits of one run of a plan, as the bash tool reports them. */
export interface ShellRunLimits {
  /** The limits the run reached, each a sentence naming the limit and its value. */
  hits(outcome: { statuses: readonly number[]; stderr: string }): { limit: string; message: string }[];
  /** Frees what holds the limits (a cgroup, the run's /tmp directory), once the run's processes are gone. */
  release(): Promise<void>;
}

/**
 * Where an unrestricted command runs on this machine (see `developerSandbox`): refused with the
 * reason, or allowed with the argv that runs `bash -c COMMAND` inside the sandbox and the
 * environment to start it with.
 */
export type ShellConfinement = (cwd: string) => Promise<
  | {
      allowed: true;
      wrap: (argv: string[]) => string[];
      env: Record<string, string | undefined>;
      /** The resource limits of the command (reported and released like the restricted shell's). */
      limits?: ShellRunLimits;
    }
  | { allowed: false; reason: string }
>;

/** Options of {@link createBashTool}. */
export interface BashToolOptions {
  /** Backend to run on; defaults to the session's. */
  backend?: ExecutionBackend;
  /**
   * `unrestricted` runs the command with `bash -c`. `restricted` runs only what `gate` allows,
   * executing its checked plan without a shell.
   */
  mode: 'restricted' | 'unrestricted';
  /** Required in restricted mode: the shell policy. */
  gate?: ShellGate;
  /** Default timeout in seconds (120 restricted, 300 unrestricted). */
  timeoutSeconds?: number;
  /** Default working directory of commands; the session's working directory when absent. */
  workingDir?: string;
  /** Seconds between SIGTERM and SIGKILL when a command is stopped. */
  killGraceSeconds?: number;
  /**
   * Unrestricted mode on this machine (the local backend): the sandbox every command runs in.
   * Absent, or on another backend (a container, a remote machine), commands run as they are.
   */
  confine?: ShellConfinement;
}

/**
 * `bash`: runs a shell command and returns its output and exit code as JSON. Output is streamed
 * and only its head and tail are kept; a timeout or a cancellation kills the whole process group
 * (SIGTERM, then SIGKILL).
 */
export function createBashTool(options: BashToolOptions) {
  const restricted = options.mode === 'restricted';
  const defaultTimeout = options.timeoutSeconds ?? (restricted ? 120 : 300);
  if (restricted && options.gate === undefined) {
    throw new TypeError('createBashTool: restricted mode needs a gate (the shell policy)');
  }
  return defineTool({
    name: 'bash',
    description: restricted
      ? 'Execute a read-only shell command and return its output as JSON {"output", "metadata": {"exit_code", ' +
        '"duration_seconds"}}. Commands are read-only: every command in pipelines and lists is checked against an ' +
        'allowlist of inspection tools (ls, cat, grep, find, git log, ...); commands that change files or the system ' +
        'are refused with the reason. Only the redirections >/dev/null, 2>/dev/null and 2>&1 are allowed. ' +
        `Default timeout ${defaultTimeout} seconds.`
      : 'Execute a bash command and return its output as JSON {"output", "metadata": {"exit_code", ' +
        '"duration_seconds"}}. stdout and stderr are both returned; very long output keeps its beginning and end. ' +
        `Default timeout ${defaultTimeout} seconds; the command and everything it started is killed when it expires.`,
    parameters: {
      type: 'object',
      properties: {
        command: { type: 'string', description: 'The command to run.' },
        working_dir: {
          type: 'string',
          description: 'Directory to run the command in (default: the working directory).',
        },
        timeout: { type: 'integer', description: `Timeout in seconds (default ${defaultTimeout}).` },
      },
      required: ['command'],
      additionalProperties: false,
    },
    // Declared, not decided: the agent's approval policy reads these (without a profile, it asks
    // before unrestricted commands, as the original did).
    annotations: restricted ? { destructive: false } : { destructive: true, openWorld: true },
    async handle({ arguments: args }, context): Promise<ToolResult> {
      const command = args.command ?? '';
      if (command.trim() === '') return failure('No command provided');
      const backend = backendOf(options.backend, context);
      const cwd = await resolvePath(
        backend,
        context.workingDir,
        args.working_dir ?? options.workingDir ?? context.workingDir,
      );
      const exists = await backend.stat(cwd).then(
        (info) => info.type === 'directory',
        () => false,
      );
      if (!exists) return failure(`Working directory not found: ${cwd}`);
      const timeoutSeconds = Math.max(1, args.timeout ?? defaultTimeout);

      let gated: Awaited<ReturnType<ShellGate>> | undefined;
      if (restricted && options.gate) {
        try {
          gated = await options.gate(command, cwd, backend);
        } catch (error) {
          return failure(`Command blocked: the shell policy could not check it (${errorMessage(error)})`);
        }
        if (!gated.allowed) return failure(`Command blocked: ${gated.reason}`, { command, working_dir: cwd });
      }
      let confined:
        | { wrap: (argv: string[]) => string[]; env: Record<string, string | undefined>; limits?: ShellRunLimits }
        | undefined;
      if (!restricted && options.confine !== undefined && backend.name === 'local' && backend.isolation === undefined) {
        const decision = await options.confine(cwd).catch((error: unknown) => ({
          allowed: false as const,
          reason: `the sandbox could not be prepared (${errorMessage(error)})`,
        }));
        if (!decision.allowed) return failure(`Command blocked: ${decision.reason}`, { command, working_dir: cwd });
        confined = decision;
      }

      // The limits of this command: the restricted shell's line, or the developer sandbox's command.
      const runLimits = gated?.allowed ? gated.limits : confined?.limits;
      const stdout = new OutputCollector(BASH_OUTPUT_HEAD_BYTES, BASH_OUTPUT_TAIL_BYTES);
      const stderr = new OutputCollector(BASH_OUTPUT_HEAD_BYTES, BASH_OUTPUT_TAIL_BYTES);
      const supervisor = new ProcessSupervisor({
        timeoutMs: timeoutSeconds * 1000,
        signal: context.signal,
        graceMs: (options.killGraceSeconds ?? 2) * 1000,
      });
      const started = performance.now();
      const statuses: number[] = [];
      const backendLimits = new Set<string>();
      const noteExit = (exit: ProcessExit): void => {
        statuses.push(statusOf(exit));
        if (exit.limitReached !== undefined) backendLimits.add(exit.limitReached);
      };
      let exitCode: number;
      try {
        if (gated?.allowed) {
          const wrap = gated.wrap;
          exitCode = await runPlan(
            gated.plan,
            {
              backend,
              cwd,
              env: gated.env,
              ...(wrap ? { wrap: (planned: PlanCommand) => wrap(planned, cwd) } : {}),
              onExit: noteExit,
            },
            { stdout, stderr },
            supervisor,
          );
        } else {
          const exit: ProcessExit = await runProcess(
            backend,
            confined === undefined
              ? { argv: ['bash', '-c', command], cwd, stdin: 'ignore' }
              : { argv: confined.wrap(['bash', '-c', command]), cwd, env: confined.env, stdin: 'ignore' },
            { onStdout: (chunk) => stdout.push(chunk), onStderr: (chunk) => stderr.push(chunk) },
            supervisor,
          );
          if (exit.spawnError) return failure(`Error executing command: ${exit.spawnError.message}`);
          noteExit(exit);
          exitCode = statusOf(exit);
        }
      } catch (error) {
        await runLimits?.release();
        return failure(`Error executing command: ${errorMessage(error)}`);
      } finally {
        await supervisor.finish();
      }
      const durationSeconds = Math.round((performance.now() - started) / 100) / 10;
      const out = stdout.text();
      const err = stderr.text();
      let text = out && err ? `${out}\n${err}` : out || err;
      const metadata: Record<string, unknown> = {
        exit_code: exitCode,
        duration_seconds: durationSeconds,
        command,
        working_dir: cwd,
        stdout_bytes: stdout.totalBytes,
        stderr_bytes: stderr.totalBytes,
      };
      if (supervisor.reason === 'timeout') {
        text += `\n\n[Command timed out after ${timeoutSeconds}s and was killed]`;
        exitCode = -1;
        metadata['exit_code'] = -1;
        metadata['timed_out'] = true;
      } else if (supervisor.reason === 'cancelled') {
        text += '\n\n[Command was cancelled and killed]';
        exitCode = -1;
        metadata['exit_code'] = -1;
        metadata['cancelled'] = true;
      }
      // Every limit reached is named, so a killed command never comes back as an empty output.
      const notes = [...backendLimits].map((message) => `[${message}]`);
      if (runLimits !== undefined) {
        // Read before the release: the cgroup's counters go with it.
        const hits = runLimits.hits({ statuses, stderr: err });
        // Not awaited: a killed line's last processes may take a moment to leave the cgroup.
        void runLimits.release();
        notes.push(...hits.map((hit) => `[${hit.message}; the profile's limits.${hit.limit} sets it]`));
        if (hits.length > 0) metadata['limits_reached'] = hits.map((hit) => hit.limit);
      }
      if (notes.length > 0) text = text === '' ? notes.join('\n') : `${text}\n\n${notes.join('\n')}`;
      const content = JSON.stringify(
        { output: text, metadata: { exit_code: exitCode, duration_seconds: durationSeconds } },
        null,
        2,
      );
      return { content, success: exitCode === 0, metadata };
    },
  });
}
