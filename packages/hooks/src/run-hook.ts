import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import type { HookConfig } from './config.js';

/** How much of a hook's standard output, standard error or HTTP response is kept. */
export const MAX_HOOK_OUTPUT_BYTES = 64 * 1024;

/** The header that carries the HMAC-SHA256 of an HTTP hook's body: `sha256=<hex>`. */
export const SIGNATURE_HEADER = 'X-Rho-Signature';

/** How a hook run went. */
export interface HookRunResult {
  /** `ok` (exit 0, HTTP 2xx), `failed` (another exit code, an HTTP error, no start), `timeout` (killed at its timeout). */
  readonly outcome: 'ok' | 'failed' | 'timeout';
  readonly durationMs: number;
  /** The exit code of a command, when it exited. */
  readonly exitCode?: number;
  /** The HTTP status of a URL hook, when it answered. */
  readonly status?: number;
  /** Standard output, or the HTTP response's body (at most {@link MAX_HOOK_OUTPUT_BYTES}). */
  readonly stdout: string;
  readonly stderr: string;
  /** Why it failed, in a few words. */
  readonly error?: string;
}

/** What a hook is given besides its configuration. */
export interface HookRunInput {
  /** The event's name (`session_end`, `pre_tool`, ...). */
  readonly event: string;
  /** The event as JSON: the command's standard input, the POST's body. */
  readonly body: string;
  /** Added to the command's environment (`RHO_SESSION_ID`, `RHO_HOOK_EVENT`, ...). */
  readonly env: Readonly<Record<string, string>>;
  /** The environment the command inherits. */
  readonly baseEnv: Readonly<Record<string, string | undefined>>;
  /** Where the command runs. */
  readonly cwd?: string;
  /** Stops the hook (a cancelled tool call): a command's process group is killed. */
  readonly signal?: AbortSignal;
}

/** Runs one hook once, never throwing: a failure or a timeout is its result. */
export function runHook(hook: HookConfig, input: HookRunInput): Promise<HookRunResult> {
  return hook.kind === 'command' ? runCommand(hook.command, hook.timeoutMs, input) : runHttp(hook, input);
}

/** The `X-Rho-Signature` value for a body: `sha256=` and the hex HMAC-SHA256 of its bytes under `secret`. */
export function signBody(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

class Bounded {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  add(chunk: Buffer): void {
    if (this.size >= MAX_HOOK_OUTPUT_BYTES) return;
    const kept = chunk.subarray(0, MAX_HOOK_OUTPUT_BYTES - this.size);
    this.chunks.push(kept);
    this.size += kept.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

function runCommand(command: string, timeoutMs: number, input: HookRunInput): Promise<HookRunResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const stdout = new Bounded();
    const stderr = new Bounded();
    let timedOut = false;
    let settled = false;
    let child: ReturnType<typeof spawn>;
    const timer: { id?: ReturnType<typeof setTimeout> } = {};
    let grace: ReturnType<typeof setTimeout> | undefined;
    const finish = (result: Omit<HookRunResult, 'durationMs' | 'stdout' | 'stderr'>): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer.id);
      clearTimeout(grace);
      input.signal?.removeEventListener('abort', onAbort);
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve({
        ...result,
        durationMs: Math.round(performance.now() - started),
        stdout: stdout.text(),
        stderr: stderr.text(),
      });
    };
    // The hook and whatever it started: a shell's children die with it at the timeout.
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const onAbort = (): void => {
      killGroup();
      finish({ outcome: 'failed', error: 'stopped: the run was cancelled' });
    };
    try {
      child = spawn('sh', ['-c', command], {
        cwd: input.cwd,
        env: { ...input.baseEnv, ...input.env },
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      });
    } catch (error) {
      resolve({
        outcome: 'failed',
        durationMs: Math.round(performance.now() - started),
        stdout: '',
        stderr: '',
        error: `could not start: ${error instanceof Error ? error.message : String(error)}`,
      });
      return;
    }
    timer.id = setTimeout(() => {
      timedOut = true;
      killGroup();
      finish({ outcome: 'timeout', error: `killed at its timeout of ${timeoutMs / 1000} s` });
    }, timeoutMs);
    if (input.signal?.aborted === true) onAbort();
    input.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout!.on('data', (chunk: Buffer) => stdout.add(chunk));
    child.stderr!.on('data', (chunk: Buffer) => stderr.add(chunk));
    // A hook that does not read its input is no failure.
    child.stdin!.on('error', () => {});
    child.stdin!.end(input.body);
    child.on('error', (error) => finish({ outcome: 'failed', error: `could not start: ${error.message}` }));
    const exited = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (timedOut) return;
      if (code === 0) finish({ outcome: 'ok', exitCode: 0 });
      else if (code !== null) finish({ outcome: 'failed', exitCode: code, error: `exit code ${code}` });
      else finish({ outcome: 'failed', error: `killed by ${signal ?? 'a signal'}` });
    };
    child.on('close', exited);
    // Something the hook left running in the background may hold its output open: the exit counts.
    child.on('exit', (code, signal) => {
      grace = setTimeout(() => exited(code, signal), 200);
    });
  });
}

async function runHttp(hook: Extract<HookConfig, { kind: 'http' }>, input: HookRunInput): Promise<HookRunResult> {
  const started = performance.now();
  const timeout = AbortSignal.timeout(hook.timeoutMs);
  const signal = input.signal === undefined ? timeout : AbortSignal.any([timeout, input.signal]);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'rho-hooks',
    'x-rho-event': input.event,
  };
  if (hook.secret !== undefined) headers[SIGNATURE_HEADER.toLowerCase()] = signBody(input.body, hook.secret);
  const elapsed = (): number => Math.round(performance.now() - started);
  try {
    const response = await fetch(hook.url, { method: 'POST', headers, body: input.body, signal, redirect: 'error' });
    const body = await readBounded(response);
    if (response.ok) return { outcome: 'ok', status: response.status, durationMs: elapsed(), stdout: body, stderr: '' };
    return {
      outcome: 'failed',
      status: response.status,
      durationMs: elapsed(),
      stdout: body,
      stderr: '',
      error: `HTTP ${response.status}`,
    };
  } catch (error) {
    if (timeout.aborted)
      return {
        outcome: 'timeout',
        durationMs: elapsed(),
        stdout: '',
        stderr: '',
        error: `no answer within its timeout of ${hook.timeoutMs / 1000} s`,
      };
    const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return {
      outcome: 'failed',
      durationMs: elapsed(),
      stdout: '',
      stderr: '',
      error:
        input.signal?.aborted === true
          ? 'stopped: the run was cancelled'
          : `${error instanceof Error ? error.message : String(error)}${cause}`,
    };
  }
}

async function readBounded(response: Response): Promise<string> {
  if (response.body === null) return '';
  const kept = new Bounded();
  const reader = response.body.getReader();
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    kept.add(Buffer.from(value));
    total += value.length;
    if (total >= MAX_HOOK_OUTPUT_BYTES) {
      await reader.cancel();
      break;
    }
  }
  return kept.text();
}
