import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';

/** What a run started through `rho mcp serve` asks of the child `rho`. */
export interface ChildRunRequest {
  readonly prompt: string;
  readonly profile: string;
  readonly workingDir: string;
  readonly maxTurns?: number;
  readonly maxTokens?: number;
  readonly maxCostUsd?: number;
  /** The session's labels (`RHO_TASK_LABELS`): `mcp`, `mcp-client:<name>`. */
  readonly labels: readonly string[];
}

/** How a child run ended, from its `--json` events and its exit. */
export interface ChildRunEnd {
  readonly status: string;
  readonly answer?: string;
  readonly error?: string;
  readonly exitCode: number | null;
}

/** One event of the child's `--json` stream. */
export type ChildEvent = Record<string, unknown> & { type: string };

/** A child `rho` run: its session id once known, its events, its end. */
export interface ChildRun {
  /** Resolves with the session id (`run_start`), or rejects when the child ended before one. */
  readonly sessionId: Promise<string>;
  readonly ended: Promise<ChildRunEnd>;
  /** Listens to the events; returns the function that stops listening. */
  onEvent(listener: (event: ChildEvent) => void): () => void;
  /** Interrupts the child (SIGINT: the run ends `cancelled`), for a run whose session is not known yet. */
  interrupt(): void;
  /** Whether the child has exited. */
  readonly exited: boolean;
}

/** Where the child runs and what it inherits. */
export interface ChildRunContext {
  /** `[node, rho's bin]`. */
  readonly command: readonly [string, ...string[]];
  readonly env: NodeJS.ProcessEnv;
  /** A directory for the runs' event files (`$RHO_HOME/mcp-serve/runs`). */
  readonly eventsDir: string;
  readonly pollMs?: number;
}

/** The arguments of the child `rho`: JSON events, the profile and directory chosen, budgets; approvals wait for answer_approval. */
export function childArguments(request: ChildRunRequest): string[] {
  return [
    '--json',
    '--profile',
    request.profile,
    '--working-dir',
    request.workingDir,
    '--when-unattended',
    'wait',
    ...(request.maxTurns === undefined ? [] : ['--max-turns', String(request.maxTurns)]),
    ...(request.maxTokens === undefined ? [] : ['--max-tokens', String(request.maxTokens)]),
    ...(request.maxCostUsd === undefined ? [] : ['--max-cost', String(request.maxCostUsd)]),
    '--prompt',
    request.prompt,
  ];
}

/**
 * Starts `rho --json` for a task, detached in its own process group with stdin ignored, so the
 * session outlives the server when it should (D417). Its output goes to a file, never a pipe: a
 * pipe would break when the server exits and take the session with it. The file is read as it
 * grows, and removed when the child ends while the server still runs.
 */
export function startChildRun(request: ChildRunRequest, context: ChildRunContext): ChildRun {
  mkdirSync(context.eventsDir, { recursive: true, mode: 0o700 });
  const file = join(context.eventsDir, `${Date.now()}-${randomBytes(4).toString('hex')}.jsonl`);
  const out = openSync(file, 'a', 0o600);
  const [command, ...prefix] = context.command;
  const child = spawn(command, [...prefix, ...childArguments(request)], {
    cwd: request.workingDir,
    env: { ...context.env, RHO_TASK_LABELS: request.labels.join(',') },
    stdio: ['ignore', out, out],
    detached: true,
  });
  closeSync(out);
  child.unref();
  const listeners = new Set<(event: ChildEvent) => void>();
  const state: { sessionId?: string; status?: string; answer?: string; error?: string; text: string[] } = {
    text: [],
  };
  let resolveId!: (id: string) => void;
  let rejectId!: (error: Error) => void;
  const sessionId = new Promise<string>((resolve, reject) => {
    resolveId = resolve;
    rejectId = reject;
  });
  sessionId.catch(() => {});
  const onLine = (line: string) => {
    let event: ChildEvent;
    try {
      event = JSON.parse(line) as ChildEvent;
      if (typeof event !== 'object' || event === null || typeof event.type !== 'string')
        throw new Error('not an event');
    } catch {
      if (line.trim() !== '') state.text = [...state.text, line].slice(-5);
      return;
    }
    if (event.type === 'run_start' && typeof event.session_id === 'string' && state.sessionId === undefined) {
      state.sessionId = event.session_id;
      resolveId(event.session_id);
    } else if (event.type === 'message' && event.role === 'assistant' && typeof event.content === 'string') {
      if (event.content !== '') state.answer = event.content;
    } else if (event.type === 'run_end' && typeof event.status === 'string') state.status = event.status;
    else if (event.type === 'error' && typeof event.content === 'string') state.error = event.content;
    for (const listener of listeners) listener(event);
  };
  const reader = fileLines(file, onLine);
  const timer = setInterval(reader.read, context.pollMs ?? 100);
  timer.unref();
  let exited = false;
  const ended = new Promise<ChildRunEnd>((resolve) => {
    const finish = (code: number | null, failure?: string) => {
      if (exited) return;
      exited = true;
      clearInterval(timer);
      reader.read();
      reader.flush();
      rmSync(file, { force: true });
      const said = failure ?? state.error ?? (state.text.length === 0 ? undefined : state.text.join(' ').trim());
      if (state.sessionId === undefined)
        rejectId(new Error(`rho ended before its session started${said === undefined ? '' : `: ${said}`}`));
      resolve({
        status: state.status ?? (code === 0 ? 'completed' : 'error'),
        ...(state.answer === undefined ? {} : { answer: state.answer }),
        ...(said === undefined || state.status === 'completed' ? {} : { error: said }),
        exitCode: code,
      });
    };
    child.on('error', (error) => finish(null, `could not start rho: ${error.message}`));
    child.on('close', (code) => finish(code));
  });
  return {
    sessionId,
    ended,
    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    interrupt() {
      if (exited || child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGINT');
      } catch {
        // Gone already.
      }
    },
    get exited() {
      return exited;
    },
  };
}

/** Reads the lines appended to a file since the last read. */
function fileLines(path: string, onLine: (line: string) => void): { read: () => void; flush: () => void } {
  let offset = 0;
  let pending = '';
  const buffer = Buffer.alloc(64 * 1024);
  // A character split across two reads is decoded whole.
  const decoder = new StringDecoder('utf8');
  return {
    read() {
      let fd: number;
      try {
        fd = openSync(path, 'r');
      } catch {
        return;
      }
      try {
        for (;;) {
          const count = readSync(fd, buffer, 0, buffer.length, offset);
          if (count === 0) break;
          offset += count;
          pending += decoder.write(buffer.subarray(0, count));
          const lines = pending.split('\n');
          pending = lines.pop()!;
          for (const line of lines) onLine(line);
        }
      } finally {
        closeSync(fd);
      }
    },
    flush() {
      pending += decoder.end();
      if (pending !== '') onLine(pending);
      pending = '';
    },
  };
}
