import type { AnyTool } from '@rho/core';
import { createDelegateTool } from '@rho/core';
import type { PermissionProfile } from '@rho/permissions';
import type { ApprovalRequirement } from '@rho/permissions';
import { requiresApproval, sandboxStatus, sandboxWrapper } from '@rho/permissions';
import { fsTools } from '@rho/tools-fs';
import type { DatabaseWarning } from '@rho/tools-db';
import { dbTools, parseDatabaseConfig, resolveDatabaseConfig } from '@rho/tools-db';
import { UsageError } from './exit-codes.js';
import type { ToolPackageReference } from './tool-packages.js';
import { loadToolPackages } from './tool-packages.js';

/** What decides the tool set of a run. */
export interface ToolSetup {
  profile: PermissionProfile;
  workingDir: string;
  home: string;
  env: NodeJS.ProcessEnv;
  /** `--db-config`. */
  dbConfigPath?: string;
  /** `databases` of the agent config. */
  databases?: Record<string, unknown>;
  /** Told once per database alias when a readonly session's account could write. */
  onDatabaseWarning?: (warning: DatabaseWarning) => void;
  /** Told once per run when restricted shell commands run without the sandbox, or will be refused for want of one. */
  onWarning?: (message: string) => void;
}

/** Notices already shown by this process (a REPL builds tools again on /resume). */
const shownNotices = new Set<string>();

/**
 * The tools a profile allows: the file and shell tools, `delegate` (a child agent with the same
 * tools and profile), and the database tools when databases are configured.
 */
export async function buildTools(setup: ToolSetup): Promise<AnyTool[]> {
  const { profile, workingDir } = setup;
  const tools: AnyTool[] = [...fsTools({ profile, workingDir, ...(setup.onWarning === undefined ? {} : { onWarning: setup.onWarning }) })];
  if (profile.shell === 'restricted' && setup.onWarning !== undefined) {
    const { refusal } = sandboxStatus(profile, await sandboxWrapper());
    if (refusal !== undefined) setup.onWarning(`every bash command will be refused: ${refusal}`);
  }
  tools.push(createDelegateTool({ requiresApproval: requiresApproval(profile, 'delegate', {}).required }));
  // Agent config `databases` wins over --db-config / RHO_DB_CONFIG / $RHO_HOME/databases.yaml.
  // Without rho's own, rho-agent's RHO_AGENT_DB_CONFIG or ~/.config/rho-agent/databases.yaml, said once.
  const resolved = setup.databases !== undefined ? undefined : await resolveDatabaseConfig({ rhoHome: setup.home, env: setup.env, ...(setup.dbConfigPath === undefined ? {} : { path: setup.dbConfigPath }) });
  if (resolved?.notice !== undefined && !shownNotices.has(resolved.notice)) {
    shownNotices.add(resolved.notice);
    setup.onWarning?.(resolved.notice);
  }
  const databases = resolved?.databases ?? parseDatabaseConfig(setup.databases, { env: setup.env, baseDir: workingDir });
  if (databases.length > 0) {
    tools.push(...(dbTools({ profile, databases, workingDir, ...(setup.onDatabaseWarning === undefined ? {} : { onWarning: setup.onDatabaseWarning }) }) as AnyTool[]));
  }
  return tools;
}

/** Tools from tool packages, and the package each came from. */
export interface PackageTools {
  tools: AnyTool[];
  /** The package (as named) each tool came from. */
  sources: Map<AnyTool, string>;
}

/**
 * Loads the tool packages and applies the profile to them, deny by default: a package tool that
 * does not declare `annotations.readOnly: true` is not offered at all under a profile without file
 * writes (`file_write: off`, as in readonly), since rho cannot see what its code changes. A name
 * that is already taken (by a built-in tool or another package) is an error.
 */
export async function loadPackageTools(references: readonly ToolPackageReference[], setup: { profile: PermissionProfile; workingDir: string; takenNames: readonly string[]; onWarning?: (message: string) => void }): Promise<PackageTools> {
  const result: PackageTools = { tools: [], sources: new Map() };
  if (references.length === 0) return result;
  const owners = new Map(setup.takenNames.map((name) => [name, 'a built-in tool']));
  for (const loaded of await loadToolPackages(references, { profile: setup.profile, workingDir: setup.workingDir })) {
    for (const tool of loaded.tools) {
      if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) {
        throw new UsageError({ message: `Tool package ${loaded.spec} has a tool named ${JSON.stringify(tool.name)}: tool names are 1-64 letters, digits, "_" or "-".` });
      }
      const owner = owners.get(tool.name);
      if (owner !== undefined) throw new UsageError({ message: `Tool package ${loaded.spec} has a tool named ${tool.name}, which is already ${owner}. Remove one of them from tool_packages / --tool-package.` });
      owners.set(tool.name, `the tool of package ${loaded.spec}`);
      if (setup.profile.fileWrite === 'off' && tool.annotations?.readOnly !== true) {
        setup.onWarning?.(`tool ${tool.name} of package ${loaded.spec} is not offered: it is not declared read-only (annotations.readOnly) and profile ${setup.profile.name} allows no writes.`);
        continue;
      }
      result.tools.push(tool);
      result.sources.set(tool, loaded.spec);
    }
  }
  return result;
}

/**
 * The approval policy of a CLI run: the profile decides for every tool, as for built-in tools;
 * on top of that, unless the profile approves nothing (`approval: none`), a package tool needs
 * approval when it is not declared read-only or when it asks for approval itself.
 */
export function approvalPolicy(profile: PermissionProfile, packageTools: PackageTools): (tool: AnyTool, args: Record<string, unknown>) => ApprovalRequirement {
  return (tool, args) => {
    const decision = requiresApproval(profile, tool.name, args);
    const source = packageTools.sources.get(tool);
    if (decision.required || source === undefined || profile.approval === 'none') return decision;
    const own = typeof tool.requiresApproval === 'function' ? tool.requiresApproval(args) === true : tool.requiresApproval === true;
    if (own) return { required: true, reason: `${tool.name} (from tool package ${source}) asks for approval` };
    if (tool.annotations?.readOnly !== true) return { required: true, reason: `${tool.name} comes from tool package ${source} and is not declared read-only` };
    return decision;
  };
}
