import type { AnyTool } from '@rho/core';
import { ConfigError } from '@rho/core';
import type { PermissionProfile } from '@rho/permissions';

/** Tools from outside rho (a tool package, the application's own), and where they come from. */
export interface ExtraTools {
  /** Where the tools come from, as messages name it: `tool package ./stamp.mjs`, `the tools option`. */
  source: string;
  /** The tools, made with `defineTool` of `@rho/core` (or of the same shape). */
  tools: readonly AnyTool[];
}

/** The extra tools a profile admits, and the source each came from. */
export interface AdmittedTools {
  tools: AnyTool[];
  sources: Map<AnyTool, string>;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Whether a tool declares that it changes nothing (and does not contradict that by declaring itself destructive). */
export function declaredReadOnly(tool: AnyTool): boolean {
  return tool.annotations?.readOnly === true && tool.annotations.destructive !== true;
}

/**
 * Applies the profile to tools rho did not make, deny by default: a tool that does not declare
 * `annotations.readOnly` is not offered at all under a profile without file writes
 * (`file_write: off`, as in `readonly`), since rho cannot see what its code changes. A name
 * already taken (by one of rho's tools or another extra tool) or not a valid tool name is a
 * `ConfigError`: two tools of one name would make the model's choice ambiguous.
 */
export function admitExtraTools(
  groups: readonly ExtraTools[],
  context: {
    profile: PermissionProfile;
    takenNames: readonly string[];
    onWarning?: ((message: string) => void) | undefined;
  },
): AdmittedTools {
  const admitted: AdmittedTools = { tools: [], sources: new Map() };
  const owners = new Map(context.takenNames.map((name) => [name, 'a built-in tool']));
  for (const { source, tools } of groups) {
    const Source = source.charAt(0).toUpperCase() + source.slice(1);
    for (const tool of tools) {
      if (
        tool === null ||
        typeof tool !== 'object' ||
        typeof tool.handle !== 'function' ||
        typeof tool.description !== 'string' ||
        typeof tool.parameters !== 'object' ||
        tool.parameters === null
      ) {
        throw new ConfigError({
          message: `${Source} has something that is not a tool (${describe(tool)}): give tools made with defineTool of @rho/core (name, description, parameters, handle).`,
        });
      }
      if (typeof tool.name !== 'string' || !TOOL_NAME.test(tool.name)) {
        throw new ConfigError({
          message: `${Source} has a tool named ${JSON.stringify(tool.name)}: tool names are 1-64 letters, digits, "_" or "-".`,
        });
      }
      const owner = owners.get(tool.name);
      if (owner !== undefined)
        throw new ConfigError({
          message: `${Source} has a tool named ${tool.name}, which is already ${owner}. Remove or rename one of them.`,
        });
      owners.set(tool.name, `the tool of ${source}`);
      if (context.profile.fileWrite === 'off' && !declaredReadOnly(tool)) {
        context.onWarning?.(
          `tool ${tool.name} (from ${source}) is not offered: it is not declared read-only (annotations.readOnly) and profile ${context.profile.name} allows no writes.`,
        );
        continue;
      }
      admitted.tools.push(tool);
      admitted.sources.set(tool, source);
    }
  }
  return admitted;
}

function describe(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? typeof value;
  const name = (value as { name?: unknown }).name;
  return typeof name === 'string' ? `an object named ${name} without description, parameters or handle` : 'an object';
}
