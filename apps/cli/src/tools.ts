import type { ApprovalAvailability, Toolset } from '@rho/agent';
import { createToolset } from '@rho/agent';
import type { ExecutionBackend } from '@rho/core';
import type { PermissionProfile } from '@rho/permissions';
import type { DatabaseConfig, DatabaseWarning } from '@rho/tools-db';
import type { McpServerConfig } from '@rho/tools-mcp';
import type { ToolPackageReference } from './tool-packages.js';
import { loadToolPackages } from './tool-packages.js';

/** What decides the tool set of a run. */
export interface ToolSetup {
  profile: PermissionProfile;
  workingDir: string;
  /** Where the file and shell tools run. */
  backend?: ExecutionBackend;
  home: string;
  env: NodeJS.ProcessEnv;
  /** The database aliases, resolved by the databases settings section (the agent config's, else a databases.yaml's). */
  databases: readonly DatabaseConfig[];
  /**
   * MCP servers whose tools the profile's `mcp:` rules admit: an `mcp_servers` mapping, or the
   * servers of `$RHO_HOME/config.yaml` and the agent config already merged (`parseMcpServerSources`).
   */
  mcpServers?: Readonly<Record<string, unknown>> | readonly McpServerConfig[];
  /** Aborts the set-up (MCP servers starting) when the run is cancelled meanwhile. */
  signal?: AbortSignal;
  /** `tool_packages` and `--tool-package`, resolved from node_modules or paths here. */
  toolPackages?: readonly ToolPackageReference[];
  /** Whether this run can obtain approvals: a terminal that asks, `--auto-approve`, or nobody. */
  approvals: ApprovalAvailability;
  /** Told once per database alias when a readonly session's account could write. */
  onDatabaseWarning?: (warning: DatabaseWarning) => void;
  /** Told about tools not offered and about restricted shell commands running without the sandbox or refused for want of one. */
  onWarning?: (message: string) => void;
  /** Told which tools are not offered for want of an approver, instead of `onWarning` (the caller names them its own way). */
  onWithheld?: (withheld: Toolset['withheld']) => void;
}

/** Notices already shown by this process (a REPL builds tools again on /resume). */
const shownNotices = new Set<string>();

/**
 * The toolset of a CLI run: `createToolset` of `@rho/agent` (the tools the profile allows, and
 * its approval policy) with the run's database aliases and the tools of the tool packages, which the toolset admits under the profile (deny by default) and the same approval
 * policy as rho's own tools. Resolving packages from node_modules stays here, in the CLI.
 */
export async function buildToolset(setup: ToolSetup): Promise<Toolset> {
  const { profile, workingDir } = setup;
  const packages = await loadToolPackages(setup.toolPackages ?? [], { profile, workingDir });
  return createToolset({
    profile,
    workingDir,
    ...(setup.backend === undefined ? {} : { backend: setup.backend }),
    env: setup.env,
    rhoHome: setup.home,
    databases: setup.databases,
    extraTools: packages.map((loaded) => ({ source: `tool package ${loaded.spec}`, tools: loaded.tools })),
    ...(setup.mcpServers === undefined ? {} : { mcpServers: setup.mcpServers }),
    ...(setup.signal === undefined ? {} : { signal: setup.signal }),
    approvals: setup.approvals,
    // Said once per process: a REPL builds the toolset again on /resume.
    ...(setup.onWarning === undefined ? {} : { onWarning: onceEach(setup.onWarning) }),
    ...(setup.onWithheld === undefined ? {} : { onWithheld: setup.onWithheld }),
    ...(setup.onDatabaseWarning === undefined ? {} : { onDatabaseWarning: setup.onDatabaseWarning }),
  });
}

function onceEach(show: (message: string) => void): (message: string) => void {
  return (message) => {
    if (shownNotices.has(message)) return;
    shownNotices.add(message);
    show(message);
  };
}
