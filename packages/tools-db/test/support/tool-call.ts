import type { Tool, ToolContext, ToolResult } from '@rho/core';
import { builtinProfile } from '@rho/permissions';
import type { PermissionProfile } from '@rho/permissions';

/**
 * A built-in profile, failing loudly if the permissions package lost it; `readonly-exports` is
 * `readonly` with `database_exports: on` (the one way a read-only profile lets export_query write).
 */
export function profile(name: 'readonly' | 'readonly-exports' | 'developer' | 'unrestricted'): PermissionProfile {
  if (name === 'readonly-exports') return { ...profile('readonly'), name, databaseExports: true };
  const found = builtinProfile(name);
  if (found === undefined) throw new Error(`built-in profile ${name} is missing`);
  return found;
}

/** Calls a tool the way the registry would, with an already validated argument object. */
export function call(
  tool: Tool,
  args: Record<string, unknown>,
  workingDir: string = process.cwd(),
  signal: AbortSignal = new AbortController().signal,
): Promise<ToolResult> {
  const context = { signal, sessionId: 'test-session', workingDir, backend: undefined } as unknown as ToolContext;
  return tool.handle({ callId: 'call-1', toolName: tool.name, arguments: args }, context);
}

/** The one tool of a list, by name. */
export function toolNamed(tools: readonly Tool[], name: string): Tool {
  const tool = tools.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`no tool named ${name} among ${tools.map((item) => item.name).join(', ')}`);
  return tool;
}
