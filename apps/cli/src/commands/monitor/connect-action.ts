import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { SessionContext } from '@rho/monitor';
import { SessionStore } from '@rho/core';
import { sessionSettingsDocument } from '@rho/core/settings';
import { buildCoordinatorPrompt, readSessionContext, readMonitoredSession } from '@rho/monitor';
import { cliBinPath } from '../../cli-files.js';
import { UsageError } from '../../exit-codes.js';
import type { MonitorIo } from './monitor-io.js';

/** Linux refuses a single argument over 128 KiB (MAX_ARG_STRLEN); the prompt travels as one. */
const MAX_PROMPT_BYTES = 120_000;
const COORDINATOR_MARK = '[rho connect]';

/** Options of {@link connectAction}. */
export interface ConnectOptions {
  /** What the coordinator should do with the combined context. */
  task?: string;
  /** Stops the coordinator (Ctrl+C in the monitor). */
  signal?: AbortSignal;
}

/**
 * `connect`: exports the context of each chosen agent from its trace, combines them into one
 * prompt, and runs a coordinating agent on it: a new rho session, started the way a user would
 * (`node <rho bin.js> -p PROMPT`) with the model and endpoint of the first agent and the readonly
 * profile. Its output streams here; its session stays for `rho --resume`.
 */
export async function connectAction(
  directory: string,
  prefixes: string[],
  options: ConnectOptions,
  io: MonitorIo,
  lookup?: (prefix: string) => Promise<{ id: string; directory: string }>,
): Promise<number> {
  if (prefixes.length === 0)
    throw new UsageError({ message: 'connect needs at least one session prefix: connect <prefix> <prefix>...' });
  const store = new SessionStore(directory);
  // Sessions of this directory, or (with a fleet) of any node, copied from the fleet's mirror.
  const targets = await Promise.all(
    prefixes.map((prefix) => (lookup === undefined ? store.lookup(prefix) : lookup(prefix))),
  );
  const unique = [...new Map(targets.map((target) => [target.id, target])).values()];
  const prompt = fittingPrompt(
    unique.map((target) => target.directory),
    options.task,
  );
  const settings = agentSettings(unique[0]!.directory);
  const args = [
    cliBinPath(),
    '--profile',
    'readonly',
    ...(settings.model === undefined ? [] : ['--model', settings.model]),
    ...(settings.baseUrl === undefined ? [] : ['--base-url', settings.baseUrl]),
    '-p',
    prompt,
  ];
  io.err(
    `Connecting ${unique.map((target) => target.id).join(', ')}: starting a coordinator with their combined context (${Buffer.byteLength(prompt)} bytes)\n`,
  );
  const before = new Set(store.ids());
  const code = await new Promise<number>((resolve, reject) => {
    // Its own process group: a Ctrl+C at the terminal reaches the monitor, which forwards one
    // SIGINT (a clean cancel) instead of the terminal sending it to both.
    const child = spawn(process.execPath, args, { env: io.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    child.stdout.on('data', (chunk: Buffer) => io.out(chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => io.err(chunk.toString()));
    const onAbort = () => child.kill('SIGINT');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.on('error', reject);
    child.on('close', (exitCode, signal) => {
      options.signal?.removeEventListener('abort', onAbort);
      resolve(exitCode ?? (signal === null ? 1 : 128));
    });
  });
  const created = store
    .ids()
    .filter(
      (id) =>
        !before.has(id) &&
        (readMonitoredSession(join(directory, id), {}, true)?.firstPrompt ?? '').startsWith(COORDINATOR_MARK),
    );
  if (created.length > 0)
    io.err(`Coordinator session: ${created.join(', ')} (ask it more: rho --resume ${created[0]} "question")\n`);
  return code;
}

/** The coordinator prompt, with the transcripts shortened until it fits in one argument. */
function fittingPrompt(directories: string[], task: string | undefined): string {
  let maxChars = Math.floor(100_000 / directories.length);
  for (;;) {
    const contexts: SessionContext[] = directories.map((directory) => readSessionContext(directory, { maxChars }));
    const prompt = buildCoordinatorPrompt(contexts, task === undefined ? {} : { task });
    if (Buffer.byteLength(prompt) <= MAX_PROMPT_BYTES || maxChars < 1_000) return prompt;
    maxChars = Math.floor(maxChars / 2);
  }
}

/** Model and endpoint the agent ran with (its saved settings), so the coordinator talks to the same model. */
function agentSettings(directory: string): { model?: string; baseUrl?: string } {
  const { model, base_url: baseUrl } = sessionSettingsDocument(directory);
  return {
    ...(typeof model === 'string' ? { model } : {}),
    ...(typeof baseUrl === 'string' ? { baseUrl } : {}),
  };
}
