import { execFileSync, spawnSync } from 'node:child_process';

/** Whether tmux is installed (the REPL tests need it; CI must have it). */
export const hasTmux = spawnSync('tmux', ['-V']).status === 0;
if (!hasTmux && process.env.CI === 'true')
  throw new Error('tmux is required for the REPL tests in CI (apt-get install tmux).');

/** A command running in a detached tmux session: type into it and read its screen. */
export class TmuxSession {
  readonly name = `rho-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;

  constructor(
    command: string,
    env: Record<string, string>,
    cwd: string,
    size: { columns: number; rows: number } = { columns: 150, rows: 50 },
  ) {
    const exports = Object.entries(env)
      .map(([key, value]) => `${key}='${value}'`)
      .join(' ');
    const args = [
      'new-session',
      '-d',
      '-s',
      this.name,
      '-x',
      String(size.columns),
      '-y',
      String(size.rows),
      `cd '${cwd}' && env ${exports} ${command}; echo "[exit $?]"; sleep 30`,
    ];
    // The tmux server exits with its last session: a session started while the previous test's
    // server is shutting down can fail with "server exited unexpectedly". Starting again works.
    for (let attempt = 1; ; attempt += 1) {
      try {
        execFileSync('tmux', args, { stdio: ['ignore', 'ignore', 'pipe'] });
        return;
      } catch (error) {
        if (attempt >= 3) throw error;
      }
    }
  }

  /** Types text literally. */
  type(text: string): void {
    execFileSync('tmux', ['send-keys', '-t', this.name, '-l', text]);
  }

  /** Sends keys by tmux name (Enter, C-c, ...). */
  keys(...keys: string[]): void {
    execFileSync('tmux', ['send-keys', '-t', this.name, ...keys]);
  }

  /** The screen and 200 lines of scrollback. */
  screen(): string {
    return execFileSync('tmux', ['capture-pane', '-p', '-S', '-200', '-t', this.name], { encoding: 'utf8' });
  }

  /** Waits until the screen matches. */
  async waitFor(pattern: RegExp, timeoutMs = 10_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const screen = this.screen();
      if (pattern.test(screen)) return screen;
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${pattern} on screen:\n${screen}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Ends the tmux session. */
  kill(): void {
    spawnSync('tmux', ['kill-session', '-t', this.name]);
  }
}
