import type { ExecutionBackend, ToolContext, ToolResult } from '@rho/core';
import { checkReadPath, readView, type ReadView } from '@rho/permissions';
import { failure } from './result.js';

/**
 * The read view of the file tools: one made for the session (`fsTools` builds it from the
 * profile, the working directory and rho's home), or a function of the call's working directory.
 */
export type ReadViewSource = ReadView | ((workingDir: string) => ReadView);

const defaults = new Map<string, ReadView>();

/**
 * The view a call decides on. On this machine: the configured one, else the default view of the
 * call's working directory (deny by default even for tools made by hand). Another backend's files
 * are not this machine's: only the `/proc` rule applies there (the backend decides on its own).
 */
export function viewOf(
  source: ReadViewSource | undefined,
  backend: ExecutionBackend,
  context: ToolContext,
): ReadView | undefined {
  if (backend.name !== 'local' || backend.isolation !== undefined) return undefined;
  if (typeof source === 'function') return source(context.workingDir);
  if (source !== undefined) return source;
  let view = defaults.get(context.workingDir);
  if (view === undefined) {
    view = readView({ workingDir: context.workingDir });
    defaults.set(context.workingDir, view);
  }
  return view;
}

/**
 * The refusal of a path the file tools may not read, or undefined: the read view's decision
 * (`readView` of `@rho/permissions`, the one the shell's sandbox mounts), judged on the path as
 * written and on its real path, so a link planted in the working directory does not get around
 * it. A git config file, which the sandbox shows without its credentials, is not read by the file
 * tools at all. A path that cannot be resolved (missing) is judged as written; the tool's own
 * errors then report it.
 */
export async function readPathRefusal(
  backend: ExecutionBackend,
  path: string,
  view?: ReadView,
): Promise<ToolResult | undefined> {
  const realPath = await backend.realpath(path).catch(() => path);
  for (const candidate of new Set([path, realPath])) {
    if (view === undefined) {
      const decision = checkReadPath(candidate);
      if (!decision.allowed) return failure(`Refused: ${decision.reason}`, { rule: decision.rule });
      continue;
    }
    const decision = view.decide(candidate);
    if (!decision.allowed) return failure(`Refused: ${decision.reason}`, { rule: decision.rule });
    if (decision.sanitized === 'git-config')
      return failure(
        `Refused: ${candidate} is a git config file, which may hold credentials (http.extraheader, credential helpers, ` +
          'tokens in URLs); the file tools do not read it. Use `git config --list` in the bash tool, whose sandbox shows it without them.',
        { rule: 'read.git-config' },
      );
  }
  return undefined;
}

/** Whether a file a search reported may be shown: visible in the view (the search itself does not know it). */
export function visibleInView(view: ReadView | undefined, path: string): boolean {
  if (view === undefined) return true;
  const decision = view.decide(path);
  return decision.allowed && decision.sanitized === undefined;
}
