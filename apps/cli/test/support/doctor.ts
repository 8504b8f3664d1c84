// Shared by the `rho doctor` tests: run it with --json and read its checks; a private
// $RHO_HOME; a port nothing listens on; a PATH of chosen programs only.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runRho, type RunRhoOptions } from './run-rho.js';

/** One check of `rho doctor --json`. */
export interface Check {
  check: string;
  status: 'ok' | 'warn' | 'fail' | 'skip';
  detail: string;
  fix: string | null;
}

/** What `rho doctor --json` did. */
export interface DoctorOutcome {
  code: number | null;
  checks: Check[];
  stdout: string;
  stderr: string;
  /** Milliseconds from spawn to exit. */
  elapsedMs: number;
  /** The check of this name (the test fails when there is none). */
  get(check: string): Check;
}

/** `--import` of the hook that hides packages ($RHO_TEST_HIDE_MODULES). */
export const HIDE_MODULES = `--import ${fileURLToPath(new URL('./hide-modules.mjs', import.meta.url))}`;

/** Runs `rho doctor --json ARGS` and parses its checks. */
export async function doctor(args: string[], options: RunRhoOptions = {}): Promise<DoctorOutcome> {
  const started = Date.now();
  const outcome = await runRho(['doctor', '--json', ...args], options);
  const elapsedMs = Date.now() - started;
  let checks: Check[];
  try {
    checks = JSON.parse(outcome.stdout) as Check[];
  } catch {
    throw new Error(`rho doctor printed no JSON (exit ${outcome.code}):\n${outcome.stdout}\n${outcome.stderr}`);
  }
  return {
    ...outcome,
    checks,
    elapsedMs,
    get(name: string): Check {
      const found = checks.find((entry) => entry.check === name);
      if (found === undefined)
        throw new Error(`no check ${name} among ${checks.map((entry) => entry.check).join(', ')}`);
      return found;
    },
  };
}

/** A new directory for one test (its real path: /tmp may be a link). */
export function scratch(prefix = 'rho-doctor-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

/** A new private (0700) `$RHO_HOME` inside `root`. */
export function privateHome(root: string = scratch()): string {
  const home = join(root, 'home');
  mkdirSync(home, { mode: 0o700 });
  chmodSync(home, 0o700);
  return home;
}

/** A TCP port of 127.0.0.1 that nothing listens on (taken, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Where `program` is on this process's PATH, if anywhere. */
export function onPath(program: string): string | undefined {
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(directory, program);
    if (spawnSync('test', ['-x', candidate]).status === 0) return candidate;
  }
  return undefined;
}

/**
 * A PATH directory holding only links to `programs` (those found on this PATH) and to this
 * Node as `node`: bubblewrap lives in /usr/bin with everything else, so leaving it out of PATH
 * means a directory without it.
 */
export function pathOf(programs: readonly string[]): string {
  const directory = join(scratch('rho-doctor-path-'), 'bin');
  mkdirSync(directory);
  symlinkSync(process.execPath, join(directory, 'node'));
  for (const program of programs) {
    const found = onPath(program);
    if (found !== undefined) symlinkSync(found, join(directory, program));
  }
  return directory;
}

/** Whether bubblewrap makes a sandbox on this machine (as rho probes it). */
export const bwrapWorks =
  onPath('bwrap') !== undefined &&
  spawnSync('bwrap', ['--ro-bind', '/', '/', '--unshare-all', '--cap-drop', 'ALL', 'true'], { stdio: 'ignore' })
    .status === 0;

/** Whether this process is root (chmod does not stop root's writes). */
export const asRoot = process.getuid?.() === 0;

/** The API key the tests give rho (it must never be printed). */
export const KEY = 'sk-doctor-test-0123456789abcdef';

/** A run's environment around `home`: its own HOME (no rho-agent files of the machine), a key. */
export function around(home: string, env: NodeJS.ProcessEnv = {}): RunRhoOptions {
  return { cwd: dirname(home), env: { HOME: dirname(home), RHO_HOME: home, OPENAI_API_KEY: KEY, ...env } };
}

/** Flags under which nothing needs bubblewrap (so a test of something else does not depend on it). */
export const NO_SANDBOX = ['--profile', 'unrestricted', '--backend', 'local'];
