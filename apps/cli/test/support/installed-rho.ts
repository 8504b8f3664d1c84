// Runs a `rho` installed outside the workspace (global-install.test.ts): through its bin link and
// shebang, with a minimal environment, against a loopback model server.
import { spawn } from 'node:child_process';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackStep } from '@rho/core/testing';
import type { Outcome } from './run-rho.js';

/** Where and how the installed `rho` runs. */
export interface InstalledRun {
  /** The bin link (`<prefix>/bin/rho`). */
  bin: string;
  cwd: string;
  /** `$HOME` and `$RHO_HOME`. */
  home: string;
  /** `$PATH`: it must name a folder with `node` (the bin's shebang is `#!/usr/bin/env node`). */
  path: string;
}

/** Runs the installed `rho` once with `args`. */
export function runInstalled(args: string[], run: InstalledRun): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(run.bin, args, {
      cwd: run.cwd,
      env: { PATH: run.path, HOME: run.home, RHO_HOME: run.home, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** What a scripted task left: the outcome, the tool results the model got last, and how many requests it made. */
export interface TaskOutcome extends Outcome {
  results: string[];
  requests: number;
}

/** Runs a task of scripted model steps with the installed `rho` (`--base-url` of a new loopback server). */
export async function runInstalledTask(steps: LoopbackStep[], args: string[], run: InstalledRun): Promise<TaskOutcome> {
  const server = await startLoopbackServer({ steps });
  try {
    const outcome = await runInstalled(['--base-url', server.url, '--model', 'gpt-4o-mini', ...args], run);
    const last = server.requests.at(-1)?.body as { messages?: { role: string; content: string }[] } | undefined;
    const results = (last?.messages ?? [])
      .filter((message) => message.role === 'tool')
      .map((message) => message.content);
    return { ...outcome, results, requests: server.requests.length };
  } finally {
    await server.close();
  }
}
