import type { ExecutionBackend, ToolResult } from '@rho/core';
import { checkReadPath } from '@rho/permissions';
import { failure } from './result.js';

/**
 * The refusal of a path the file tools may not read (`checkReadPath` of `@rho/permissions`,
 * judged on the real path, so a link planted in the working directory does not get around it),
 * or undefined. A path that cannot be resolved (missing) is judged as written; the tool's own
 * errors then report it.
 */
export async function readPathRefusal(backend: ExecutionBackend, path: string): Promise<ToolResult | undefined> {
  const realPath = await backend.realpath(path).catch(() => path);
  for (const candidate of new Set([path, realPath])) {
    const decision = checkReadPath(candidate);
    if (!decision.allowed) return failure(`Refused: ${decision.reason}`, { rule: decision.rule });
  }
  return undefined;
}
