/**
 * The wire protocol between the sandbox backend (in rho's process) and its server (inside the
 * bubblewrap container): one JSON object per line on the server's stdin (requests) and stdout
 * (replies and events). Bytes travel as base64.
 */

/** A call that gets exactly one {@link Reply}. */
export type Request =
  | { id: number; op: 'stat' | 'lstat' | 'realpath' | 'readlink' | 'readdir'; path: string }
  | { id: number; op: 'readFile'; path: string; maxBytes: number }
  | { id: number; op: 'writeFileAtomic' | 'createExclusive'; path: string; data: string }
  | { id: number; op: 'mkdir'; path: string; recursive: boolean }
  | { id: number; op: 'open'; path: string }
  | { id: number; op: 'read'; handle: number; position: number; length: number }
  | { id: number; op: 'close'; handle: number }
  | { id: number; op: 'ping' };

/** Messages about processes, which get no reply (their effects come back as {@link ProcessEvent}s). */
export type Command =
  | {
      op: 'spawn';
      proc: number;
      argv: readonly string[];
      cwd: string;
      env?: Record<string, string>;
      /** `pipe`: the client sends `stdin` chunks; `{ from }`: another process's stdout, connected inside the server. */
      stdin: 'ignore' | 'pipe' | { from: number };
      stdout: 'pipe' | 'ignore';
      stderr: 'pipe' | 'ignore' | 'stdout';
    }
  | { op: 'stdin'; proc: number; data: string }
  | { op: 'stdin-end'; proc: number }
  /** The client reads this process's output: start forwarding it (until then it waits in the pipe). */
  | { op: 'forward'; proc: number }
  /** The client dropped this process's stdout: close it (the writer then gets SIGPIPE, as in a shell). */
  | { op: 'drop'; proc: number }
  | { op: 'kill'; proc: number; signal: 'SIGTERM' | 'SIGKILL' };

/** A reply to a {@link Request}. */
export type Reply = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: WireError };

/** An error as it crosses the wire: enough to rebuild a Node-style error. */
export interface WireError {
  message: string;
  code?: string;
  path?: string;
}

/** What happens to processes, and the server's greeting. */
export type ProcessEvent =
  | { event: 'ready'; home: string; pid: number }
  | { event: 'spawned'; proc: number; pid: number | undefined }
  | { event: 'data'; proc: number; stream: 'stdout' | 'stderr'; data: string }
  | { event: 'end'; proc: number; stream: 'stdout' | 'stderr' }
  | { event: 'exit'; proc: number; exitCode: number | null; signal: string | null; spawnError?: WireError }
  /** Every process of its group is gone (sent after `exit`). */
  | { event: 'group-gone'; proc: number };
