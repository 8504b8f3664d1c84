import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The built `rho` entry point the CLI tests run. */
export const bin = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'bin.js');

/** How a `rho` process ended and what it printed. */
export interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Options of {@link runRho}. */
export interface RunRhoOptions {
  /** Added to a minimal environment (PATH, HOME, NO_COLOR=1). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Written to stdin, then stdin is closed (otherwise stdin is empty). */
  input?: string;
  onSpawn?: (child: ChildProcess) => void;
  /** Run as this user and group (only root may). */
  uid?: number;
  gid?: number;
}

/** Runs the built `rho` as a person would from a shell, and collects its output. */
export function runRho(args: string[], options: RunRhoOptions = {}): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    // A call nobody at a terminal can answer is withheld in these runs, as before waiting
    // approvals: a test that wants it to wait says so (--when-unattended wait, or this variable).
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NO_COLOR: '1',
      RHO_WHEN_UNATTENDED: 'withhold',
      ...options.env,
    };
    const child = spawn(process.execPath, [bin, ...args], {
      env,
      cwd: options.cwd ?? tmpdir(),
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      ...(options.uid === undefined ? {} : { uid: options.uid }),
      ...(options.gid === undefined ? {} : { gid: options.gid }),
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (options.input !== undefined) child.stdin?.end(options.input);
    options.onSpawn?.(child);
  });
}
