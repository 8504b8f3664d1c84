import type { AnyTool } from '@rho/core';
import { createDelegateTool } from '@rho/core';
import type { PermissionProfile } from '@rho/permissions';
import { requiresApproval, sandboxStatus, sandboxWrapper } from '@rho/permissions';
import { fsTools } from '@rho/tools-fs';
import type { DatabaseWarning } from '@rho/tools-db';
import { dbTools, loadDatabaseConfig, parseDatabaseConfig } from '@rho/tools-db';

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
  const databases = setup.databases !== undefined
    ? parseDatabaseConfig(setup.databases, { env: setup.env, baseDir: workingDir })
    : await loadDatabaseConfig({ rhoHome: setup.home, env: setup.env, ...(setup.dbConfigPath === undefined ? {} : { path: setup.dbConfigPath }) });
  if (databases.length > 0) {
    tools.push(...(dbTools({ profile, databases, workingDir, ...(setup.onDatabaseWarning === undefined ? {} : { onWarning: setup.onDatabaseWarning }) }) as AnyTool[]));
  }
  return tools;
}
