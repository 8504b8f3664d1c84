// The REPL's helpers that need none of its state: the history file, the lines of `/status`,
// and `/upload` / `/download` of a Daytona sandbox.
import { appendFileSync, mkdirSync, readFileSync } from 'node:fs';
import { basename, join, posix, resolve } from 'node:path';
import type { McpContextCost } from '@rho/agent';
import type { Session } from '@rho/core';
import type { ApprovalMemory } from './approval-prompt.js';
import { formatCost, formatTokens } from './format.js';
import type { RunSetup } from './run-setup.js';
import type { Terminal } from './terminal.js';

/** How many entries of the history file the REPL reads and keeps. */
export const HISTORY_LIMIT = 1000;

export function loadHistory(path: string): string[] {
  try {
    // readline wants the newest entry first; entries are stored JSON-encoded, one a line.
    return readFileSync(path, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .slice(-HISTORY_LIMIT)
      .map((line) => {
        try {
          return String(JSON.parse(line));
        } catch {
          return line;
        }
      })
      .reverse();
  } catch {
    return [];
  }
}

export function appendHistory(path: string, entry: string): void {
  try {
    mkdirSync(join(path, '..'), { recursive: true });
    appendFileSync(path, `${JSON.stringify(entry)}\n`);
  } catch {
    // History is a convenience; a read-only home must not break the REPL.
  }
}

/** What `/status` shows of the REPL's session. */
export interface StatusInput {
  setup: RunSetup;
  session: Session;
  window: Awaited<ReturnType<Session['resolveContextWindow']>>;
  autoApprove: boolean;
  memory: ApprovalMemory;
}

/** The lines of `/status`: session, model, profile, usage, cost, context, approvals, instructions, MCP servers. */
export function statusLines({ setup, session, window, autoApprove, memory }: StatusInput): string[] {
  const usage = session.state.usage;
  const last = session.state.lastInputTokens;
  return [
    `session  ${session.id}${session.directory === undefined ? '' : ` (${session.directory})`}`,
    `model    ${setup.model}`,
    `profile  ${setup.profile.name} (shell ${setup.profile.shell}, file write ${setup.profile.fileWrite}, database ${setup.profile.database})`,
    `usage    ${formatTokens(usage.input_tokens)} in | ${formatTokens(usage.output_tokens)} out | ${formatTokens(usage.cached_tokens)} cached`,
    `cost     ${formatCost(usage)}`,
    `context  ${last === undefined ? '-' : formatTokens(last)} of ${formatTokens(window.tokens)}${last === undefined ? '' : ` (${Math.round((last / window.tokens) * 100)}%)`}, window from ${window.source}${window.detail === undefined ? '' : `: ${window.detail}`}`,
    `approve  ${autoApprove ? 'auto' : 'ask'}${memory.tools.size > 0 ? ` (always: ${[...memory.tools].join(', ')})` : ''}${memory.calls.size > 0 ? ` (${memory.calls.size} exact call${memory.calls.size === 1 ? '' : 's'} always allowed)` : ''}`,
    `instructions ${setup.instructionFiles.length === 0 ? 'none (AGENTS.md or .rho/instructions.md from here up to the repository root)' : setup.instructionFiles.join(', ')}`,
    ...mcpStatus(setup.agent.toolset.mcpContext),
  ];
}

/** The `/status` line of MCP servers: what each one's tools cost in every request (deferred ones: what they would). */
export function mcpStatus(costs: readonly McpContextCost[]): string[] {
  if (costs.length === 0) return [];
  const parts = costs.map((cost) =>
    cost.deferred
      ? `${cost.server} ${cost.tools} tools deferred (~${formatTokens(cost.fullTokens)} tokens if listed)`
      : `${cost.server} ${cost.tools} tools ~${formatTokens(cost.listedTokens)} tokens`,
  );
  return [`mcp      ${parts.join(' | ')}`];
}

/** What `/upload` and `/download` need of a backend (the daytona backend has it). */
interface TransferringBackend {
  workingDir?: string;
  upload(localPath: string, remotePath: string): Promise<{ files: number; bytes: number; skipped: string[] }>;
  download(remotePath: string, localPath: string): Promise<{ files: number; bytes: number; skipped: string[] }>;
}

/**
 * `/upload LOCAL [REMOTE]` and `/download REMOTE [LOCAL]`: relative remote paths are in the
 * sandbox's working directory, relative local ones in the current directory; a missing second
 * path keeps the name of the first.
 */
export async function transferCommand(
  direction: 'upload' | 'download',
  words: string[],
  backend: RunSetup['backend'],
  terminal: Terminal,
): Promise<void> {
  const usage = direction === 'upload' ? 'Usage: /upload LOCAL [REMOTE]\n' : 'Usage: /download REMOTE [LOCAL]\n';
  const paths = words.filter((word) => word !== '');
  if (paths.length < 1 || paths.length > 2) {
    terminal.stderr.write(usage);
    return;
  }
  if (!('upload' in backend) || !('download' in backend)) {
    terminal.stderr.write(
      `/${direction} moves files to and from a Daytona sandbox; this session's tools run on the ${backend.name} backend (use --backend daytona).\n`,
    );
    return;
  }
  const remote = backend as unknown as TransferringBackend;
  const remoteDir = remote.workingDir ?? '/home/daytona';
  const [first = '', second] = paths;
  const local = resolve(direction === 'upload' ? first : (second ?? basename(first)));
  const remotePath = posix.resolve(remoteDir, direction === 'upload' ? (second ?? basename(first)) : first);
  try {
    const summary =
      direction === 'upload' ? await remote.upload(local, remotePath) : await remote.download(remotePath, local);
    const [from, to] = direction === 'upload' ? [local, remotePath] : [remotePath, local];
    terminal.stderr.write(
      `${direction === 'upload' ? 'Uploaded' : 'Downloaded'} ${from} → ${to} (${summary.files} file${summary.files === 1 ? '' : 's'}, ${summary.bytes} bytes)\n`,
    );
    if (summary.skipped.length > 0) {
      terminal.stderr.write(`Skipped (not regular files): ${summary.skipped.join(', ')}\n`);
    }
  } catch (error) {
    terminal.stderr.write(
      `${direction === 'upload' ? 'Upload' : 'Download'} failed: ${error instanceof Error ? error.message : String(error)}\n`,
    );
  }
}
