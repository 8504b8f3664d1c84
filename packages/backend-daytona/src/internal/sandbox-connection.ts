import type { Sandbox } from '@daytonaio/sdk';
import { shellQuote } from './shell.js';

/** Seconds a metadata command (stat, kill, rm) may take in the sandbox. */
const EXEC_TIMEOUT_SECONDS = 60;

/** What the backend's parts share: the SDK sandbox, its sessions and background work. */
export class SandboxConnection {
  /** Sessions opened for commands and not yet deleted (deleted on close). */
  readonly sessions = new Set<string>();
  /** Set once the backend is closed: loops stop. */
  closed = false;
  private readonly pending = new Set<Promise<unknown>>();

  constructor(
    /** The SDK's sandbox. */
    readonly sandbox: Sandbox,
    /** The sandbox user's home directory. */
    readonly homeDir: string,
    /** `PATH` of commands given a complete environment. */
    readonly path: string,
    /** First pause between two looks at a running command. */
    readonly pollIntervalMs: number,
  ) {}

  /**
   * Runs a short shell script through `/process/execute` (synchronous on the daemon) and returns
   * its exit status and output (stdout and stderr together).
   */
  async exec(script: string): Promise<{ exitCode: number; output: string }> {
    const response = await this.sandbox.process.executeCommand(
      `sh -c ${shellQuote(script)}`,
      undefined,
      undefined,
      EXEC_TIMEOUT_SECONDS,
    );
    return { exitCode: response.exitCode, output: response.result };
  }

  /**
   * `NAME=value` words for `env -i`: the caller's complete environment, except `PATH` and `HOME`,
   * which are the sandbox's (rho builds environments from its own process's, whose `PATH` and
   * `HOME` name directories of this machine, not of the sandbox).
   */
  environmentWords(environment: Readonly<Record<string, string | undefined>>): string[] {
    const words: string[] = [];
    for (const [name, value] of Object.entries(environment)) {
      if (value === undefined || name === 'PATH' || name === 'HOME') continue;
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) continue;
      words.push(`${name}=${value}`);
    }
    words.push(`PATH=${this.path}`, `HOME=${this.homeDir}`);
    return words;
  }

  /** Keeps a background promise (cleanup, kill) so `close()` can wait for it; never rejects. */
  track(work: Promise<unknown>): void {
    const settled = work.then(
      () => undefined,
      () => undefined,
    );
    this.pending.add(settled);
    void settled.then(() => this.pending.delete(settled));
  }

  /** Waits for the background work started so far. */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** Waits `ms` milliseconds. */
  pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      setTimeout(resolve, ms);
    });
  }
}
