/**
 * Runs git as a child process (never a shell): a fixed, HOME-independent set of settings where
 * they matter (no hooks, no autocrlf, no fsmonitor, no signing, rho's own identity), the caller's
 * `GIT_*` variables dropped, a timeout, and bounded output.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { WorkspaceError } from './errors.js';

/** How much of a git command's standard output is read by default. */
export const DEFAULT_GIT_OUTPUT_BYTES = 16 * 1024 * 1024;
/** How long a git command may run by default. */
export const DEFAULT_GIT_TIMEOUT_MS = 10 * 60 * 1000;
const STDERR_BYTES = 64 * 1024;

/** Settings given to every command: the repository's hooks never run from rho's commands. */
const FIXED_CONFIG = [
  'core.hooksPath=/dev/null',
  'core.autocrlf=false',
  'core.safecrlf=false',
  'core.fsmonitor=false',
  'core.quotepath=false',
  'commit.gpgsign=false',
  'gc.auto=0',
  'user.name=rho',
  'user.email=rho@localhost',
].flatMap((setting) => ['-c', setting]);

export interface GitOptions {
  cwd?: string;
  /** Added to the environment (GIT_INDEX_FILE, GIT_DIR, ...). */
  env?: Record<string, string>;
  /** Ignore the user's global git configuration too (shadow stores: their behaviour is rho's alone). */
  isolated?: boolean;
  input?: string | Buffer;
  /** Standard output beyond this is refused (the command is killed): a WorkspaceError. */
  maxBytes?: number;
  /** What to say when the output is over `maxBytes`. */
  tooLarge?: string;
  /** Keep the first `maxBytes` of the output and count the rest (`GitResult.bytes`) instead of refusing more. */
  cut?: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Resolve with the exit code instead of throwing on a non-zero one. */
  allowFailure?: boolean;
}

export interface GitResult {
  code: number;
  stdout: Buffer;
  stderr: string;
  /** The size of the whole output (more than `stdout` holds when `cut` cut it). */
  bytes: number;
}

function environment(options: GitOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('GIT_')) env[key] = value;
  env.GIT_CONFIG_NOSYSTEM = '1';
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_OPTIONAL_LOCKS = '0';
  env.LC_ALL = 'C';
  if (options.isolated === true) env.GIT_CONFIG_GLOBAL = '/dev/null';
  return { ...env, ...options.env };
}

/** `git a b c`, bounded, for messages. */
export function describeCommand(args: readonly string[]): string {
  const text = `git ${args.join(' ')}`;
  return text.length > 300 ? `${text.slice(0, 300)}...` : text;
}

function bounded(text: string, limit = 2000): string {
  const trimmed = text.trim();
  return trimmed.length > limit ? `...${trimmed.slice(-limit)}` : trimmed;
}

/** Runs `git <args>`; throws a WorkspaceError (`workspace_git`) when it fails, unless `allowFailure`. */
export function git(args: readonly string[], options: GitOptions = {}): Promise<GitResult> {
  const maxBytes = options.maxBytes ?? DEFAULT_GIT_OUTPUT_BYTES;
  const timeoutMs = options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...FIXED_CONFIG, ...args], {
      cwd: options.cwd,
      env: environment(options),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let failure: Error | undefined;
    const stop = (error: Error) => {
      failure ??= error;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(
      () =>
        stop(
          new WorkspaceError('workspace_git', {
            message: `${describeCommand(args)} did not finish within ${Math.round(timeoutMs / 1000)} s; it was stopped.`,
          }),
        ),
      timeoutMs,
    );
    const onAbort = () => stop(options.signal?.reason instanceof Error ? options.signal.reason : new Error('aborted'));
    if (options.signal?.aborted === true) onAbort();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let kept = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (options.cut === true) {
        if (kept < maxBytes) {
          const piece = chunk.subarray(0, maxBytes - kept);
          chunks.push(piece);
          kept += piece.length;
        }
        return;
      }
      if (size > maxBytes) {
        stop(
          new WorkspaceError('workspace_git', {
            message: `${describeCommand(args)} wrote more than ${Math.round(maxBytes / 1024 / 1024)} MiB; ${options.tooLarge ?? 'rho does not read that much into memory.'}`,
          }),
        );
        return;
      }
      chunks.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < STDERR_BYTES) stderr += chunk.toString('utf8');
    });
    child.stdin.on('error', () => {
      // The command exited before reading all its input: its exit code says why.
    });
    child.on('error', (error: NodeJS.ErrnoException) => {
      stop(
        error.code === 'ENOENT' && options.cwd !== undefined && !existsSync(options.cwd)
          ? new WorkspaceError('workspace_io', {
              message: `${describeCommand(args)} cannot run in ${options.cwd}: that directory does not exist (any more).`,
              cause: error,
            })
          : error.code === 'ENOENT'
            ? new WorkspaceError('workspace_git', {
                message:
                  'git was not found on the PATH: install git (2.30 or newer) to use workspaces and checkpoints.',
                cause: error,
              })
            : new WorkspaceError('workspace_git', {
                message: `${describeCommand(args)} could not start: ${error.message}`,
                cause: error,
              }),
      );
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (failure !== undefined) return reject(failure);
      const result = { code: code ?? -1, stdout: Buffer.concat(chunks), stderr, bytes: size };
      if (result.code !== 0 && options.allowFailure !== true) {
        return reject(
          new WorkspaceError('workspace_git', {
            message: `${describeCommand(args)} failed (exit ${result.code})${options.cwd === undefined ? '' : ` in ${options.cwd}`}: ${bounded(stderr) || 'no message'}`,
          }),
        );
      }
      resolve(result);
    });
    child.stdin.end(options.input);
  });
}

/** The standard output of `git <args>` as text, without the trailing newline. */
export async function gitText(args: readonly string[], options: GitOptions = {}): Promise<string> {
  return (await git(args, options)).stdout.toString('utf8').replace(/\n$/, '');
}

/** NUL-separated fields of a `-z` output. */
export function splitNul(output: Buffer | string): string[] {
  const text = typeof output === 'string' ? output : output.toString('utf8');
  const fields = text.split('\0');
  if (fields.at(-1) === '') fields.pop();
  return fields;
}
