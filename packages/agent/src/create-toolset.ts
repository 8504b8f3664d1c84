import { resolve } from 'node:path';
import type { AnyTool, ExecutionBackend } from '@rho/core';
import { ConfigError, createDelegateTool } from '@rho/core';
import { approvalRequestedByTool } from '@rho/core/internal';
import type {
  ApprovalPolicyOptions,
  ApprovalSubject,
  PermissionProfile,
  ProfileApprovalPolicy,
  SandboxMode,
} from '@rho/permissions';
import {
  approvalPolicy,
  BUILTIN_PROFILES,
  declaredMcpIdentity,
  builtinProfile,
  everyCallNeedsApproval,
  loadProfile,
  mcpToolRuling,
  sandboxStatus,
  sandboxWrapper,
} from '@rho/permissions';
import { fsTools } from '@rho/tools-fs';
import type { DatabaseConfig, DatabaseWarning, LoadDatabaseConfigOptions } from '@rho/tools-db';
import { closeDbTools, dbTools, parseDatabaseConfig, resolveDatabaseConfig } from '@rho/tools-db';
import type { McpRhoTool, McpServerConfig } from '@rho/tools-mcp';
import { deferredMcpTools, McpServers, parseMcpServers, toolSpecTokens } from '@rho/tools-mcp';
import type { ExtraTools } from './extra-tools.js';
import { admitExtraTools } from './extra-tools.js';

/**
 * Whether the run the tools are for can obtain approvals: `ask` (someone answers, for example an
 * interactive terminal or the application's approver), `auto` (every call is approved), `none`
 * (headless: nobody can approve, so every call that needs approval is refused).
 */
export type ApprovalAvailability = 'ask' | 'auto' | 'none';

/** The `databases` mapping (alias → settings, as under `databases:` in `databases.yaml` or an agent config), or aliases already parsed. */
export type DatabasesOption = Readonly<Record<string, unknown>> | readonly DatabaseConfig[];

/** Options of {@link createToolset}. */
export interface ToolsetOptions {
  /**
   * The permission profile: a profile object, or a name or path as `loadProfile` of
   * `@rho/permissions` takes it (built-in names, YAML files, `$RHO_HOME/profiles/NAME.yaml`).
   * Default `readonly`.
   */
  profile?: PermissionProfile | string;
  /** The session's working directory: where writes are allowed, commands run and relative paths resolve. Default: the process's. */
  workingDir?: string;
  /** Where the file and shell tools run; default the session's backend (this machine). */
  backend?: ExecutionBackend;
  /** Overrides the profile's `sandbox` for restricted shell commands (`required` or `off`). */
  sandbox?: SandboxMode;
  /**
   * Database aliases: the `databases` mapping (`${ENV}` references are resolved, SQLite paths
   * resolve against `workingDir`) or parsed aliases. Wins over `databaseConfig`.
   */
  databases?: DatabasesOption;
  /**
   * A `databases.yaml` to read when `databases` is not given: its path, or the options of
   * `loadDatabaseConfig` of `@rho/tools-db` (a path, else `RHO_DB_CONFIG`, else
   * `$RHO_HOME/databases.yaml` when it exists). Default: no database file is read.
   */
  databaseConfig?: string | LoadDatabaseConfigOptions;
  /** `$RHO_HOME`, where profile names are also looked up (`profiles/NAME.yaml`). */
  rhoHome?: string;
  /** Environment for `${ENV}` references in database settings. Default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Whether to offer `delegate` (a child agent with the same tools and profile). Default true. */
  delegate?: boolean;
  /** Tools rho did not make (tool packages, the application's own), admitted by the profile's rules. */
  extraTools?: readonly ExtraTools[];
  /**
   * MCP servers whose tools to offer (`server__tool`), decided by the profile's `mcp:` rules: the
   * `mcp_servers` mapping (server name → `command`/`args`/`env` or `url`/`headers`, `${ENV}`
   * resolved from `env`) or parsed configs. Servers start here to list their tools, restart after
   * a crash, and stop with `close()`. A server that cannot start is reported through `onWarning`.
   */
  /**
   * Stops the set-up while it waits (MCP servers starting): a caller that learns the run was
   * cancelled meanwhile aborts it, and the servers that have not answered are left out.
   */
  signal?: AbortSignal;
  mcpServers?: Readonly<Record<string, unknown>> | readonly McpServerConfig[];
  /**
   * Whether approvals can be obtained where these tools run. With `none`, a tool whose every
   * call needs approval is not offered (the model would only be refused); tools that need
   * approval only for some arguments stay. Default `ask`.
   */
  approvals?: ApprovalAvailability;
  /** Told what the application should show a person: tools not offered, a shell without its sandbox. Library code never prints. */
  onWarning?: (message: string) => void;
  /**
   * Told which tools are not offered because nobody can approve them (`approvals: 'none'`), for
   * an application that says so in its own words; when given, `onWarning` is not told about them.
   */
  onWithheld?: (withheld: readonly WithheldTool[]) => void;
  /** Told once per alias when a read-only database session's account could write. */
  onDatabaseWarning?: (warning: DatabaseWarning) => void;
}

/** The context cost of one MCP server's tools. */
export interface McpContextCost {
  /** The server name. */
  server: string;
  /** Its tools offered under the profile (listed, or found through `search_tools` when deferred). */
  tools: number;
  /** Whether its tools are deferred (`defer: true`): found through `search_tools`, not listed. */
  deferred: boolean;
  /** Approximate tokens its tools' names, descriptions and schemas take in every request (0 when deferred). */
  listedTokens: number;
  /** Approximate tokens they would take if listed. */
  fullTokens: number;
}

/** A tool that is not offered, and why. */
export interface WithheldTool {
  /** The tool's name. */
  name: string;
  /** Why it is not offered. */
  reason: string;
}

/** The tools a profile allows, the approval policy that goes with them, and what to release. */
export interface Toolset {
  /** The profile that decided everything here. */
  readonly profile: PermissionProfile;
  /** The absolute working directory the tools were made for. */
  readonly workingDir: string;
  /** The execution backend the tools were made for, when one was given. */
  readonly backend: ExecutionBackend | undefined;
  /** The tools to offer the model, in a stable order: file and shell tools, `delegate`, database tools, extra tools. */
  readonly tools: readonly AnyTool[];
  /** The one approval decision for these tools; core's `ApprovalPolicy` (`new Agent({ approvalPolicy })` of `@rho/core`). */
  readonly approvalPolicy: ProfileApprovalPolicy;
  /** Tools not offered: denied by the profile's `mcp:` rules, or needing approval where none can be obtained (`approvals: 'none'`). */
  readonly withheld: readonly WithheldTool[];
  /** The MCP servers of these tools, to list or call by hand; stopped by `close()`. */
  readonly mcp: McpServers | undefined;
  /** What each MCP server's tools cost in every model request (for `/status`), in server order. */
  readonly mcpContext: readonly McpContextCost[];
  /** The database aliases the database tools serve. */
  readonly databases: readonly DatabaseConfig[];
  /** Closes the database connections the tools opened and stops the MCP servers; the tools must not be called afterwards. */
  close(): Promise<void>;
}

/** Toolset options with the profile and databases already resolved. */
export interface ResolvedToolsetOptions extends Omit<
  ToolsetOptions,
  'profile' | 'databases' | 'databaseConfig' | 'mcpServers'
> {
  profile: PermissionProfile;
  databases: readonly DatabaseConfig[];
  /** The MCP servers, started, and their tools as listed. */
  mcp?: { servers: McpServers; tools: readonly McpRhoTool[] };
}

/**
 * The tools a permission profile allows, wired to its policies (the original's `ToolFactory`):
 * - the file and shell tools of `@rho/tools-fs` (restricted or unrestricted `bash` with the
 *   sandbox and shell gate, the readers, `write`/`edit` as `file_write` says);
 * - `delegate`;
 * - one database tool per configured dialect (drivers load on first use);
 * - extra tools (tool packages, the application's own), admitted by the profile deny by default;
 * - the profile's approval policy, judging rho's own tools by the profile's rules (by identity,
 *   so an extra tool cannot pass as one) and the others by their annotations.
 *
 * Call `close()` when done, so database connections do not keep the process alive.
 *
 * @throws ConfigError for an unknown profile, a bad database config, or an extra tool whose name is taken or invalid.
 */
export async function createToolset(options: ToolsetOptions = {}): Promise<Toolset> {
  const workingDir = resolve(options.workingDir ?? process.cwd());
  const profile =
    typeof options.profile === 'object'
      ? options.profile
      : await loadProfile(
          options.profile ?? 'readonly',
          options.rhoHome === undefined ? {} : { rhoHome: options.rhoHome },
        );
  const databases =
    options.databases !== undefined
      ? resolveDatabases(options.databases, workingDir, options.env)
      : await readDatabaseConfig(options);
  const mcp = await startMcpServers(options, workingDir);
  const { mcpServers: _mcpServers, ...rest } = options;
  let toolset: Toolset;
  try {
    toolset = buildToolset({ ...rest, workingDir, profile, databases, ...(mcp === undefined ? {} : { mcp }) });
  } catch (error) {
    await mcp?.servers.close();
    throw error;
  }
  // The restricted shell, and an unrestricted one in the sandbox on this machine (developer).
  const sandboxedShell =
    profile.shell === 'restricted' ||
    options.backend === undefined ||
    (options.backend.name === 'local' && options.backend.isolation === undefined);
  if (sandboxedShell && options.onWarning !== undefined && toolset.tools.some((tool) => tool.name === 'bash')) {
    // Said once, up front: otherwise the user learns it from each refused command.
    const { refusal } = sandboxStatus(
      options.sandbox === undefined ? profile : { ...profile, sandbox: options.sandbox },
      await sandboxWrapper(),
    );
    if (refusal !== undefined) options.onWarning(`every bash command will be refused: ${refusal}`);
  }
  return toolset;
}

async function startMcpServers(options: ToolsetOptions, workingDir: string): Promise<ResolvedToolsetOptions['mcp']> {
  const source = options.mcpServers;
  if (source === undefined) return undefined;
  const configs = Array.isArray(source)
    ? (source as readonly McpServerConfig[])
    : parseMcpServers(source, options.env === undefined ? {} : { env: options.env });
  if (configs.length === 0) return undefined;
  const servers = new McpServers(configs, {
    workingDir,
    ...(options.onWarning === undefined ? {} : { onWarning: options.onWarning }),
  });
  return { servers, tools: await servers.tools(options.signal) };
}

/** The profile for a name without reading files: a built-in profile, else a clear error. */
export function builtinProfileNamed(name: string): PermissionProfile {
  const profile = builtinProfile(name);
  if (profile === undefined) {
    throw new ConfigError({
      message: `Profile ${JSON.stringify(name)} is not a built-in profile (${BUILTIN_PROFILES.join(', ')}). To use a profile file, pass the profile loaded with loadProfile() of @rho/permissions, or use \`await Agent.create({ profile: ${JSON.stringify(name)} })\`, which reads profile files.`,
      field: 'profile',
    });
  }
  return profile;
}

/** Database aliases from the `databases` option: parsed aliases as they are, a mapping validated. */
export function resolveDatabases(
  databases: DatabasesOption,
  workingDir: string,
  env: ToolsetOptions['env'],
): readonly DatabaseConfig[] {
  if (Array.isArray(databases)) return databases as readonly DatabaseConfig[];
  return parseDatabaseConfig(databases, {
    baseDir: workingDir,
    ...(env === undefined ? {} : { env: env as Record<string, string | undefined> }),
  });
}

async function readDatabaseConfig(options: ToolsetOptions): Promise<readonly DatabaseConfig[]> {
  const source = options.databaseConfig;
  if (source === undefined) return [];
  const env = options.env === undefined ? {} : { env: options.env as Record<string, string | undefined> };
  const resolved = await resolveDatabaseConfig(
    typeof source === 'string'
      ? { path: source, ...env }
      : { ...env, ...(options.rhoHome === undefined ? {} : { rhoHome: options.rhoHome }), ...source },
  );
  // Read from rho-agent's file because rho has none: the caller tells the user (libraries never print).
  if (resolved.notice !== undefined) options.onWarning?.(resolved.notice);
  return resolved.databases;
}

/** {@link createToolset} once the profile and databases are known: no I/O, so a constructor can call it. */
export function buildToolset(options: ResolvedToolsetOptions): Toolset {
  const { profile } = options;
  const localWorkingDir = resolve(options.workingDir ?? process.cwd());
  // A remote backend (daytona) works in a directory of its own file system; database tools and
  // MCP servers run on this machine and keep the local directory.
  const workingDir = options.backend?.workingDir ?? localWorkingDir;
  const own: AnyTool[] = fsTools({
    profile,
    workingDir,
    ...(options.backend === undefined ? {} : { backend: options.backend }),
    ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }),
    ...(options.onWarning === undefined ? {} : { onWarning: options.onWarning }),
    ...(options.rhoHome === undefined ? {} : { rhoHome: options.rhoHome }),
  });
  if (options.delegate !== false) own.push(createDelegateTool());
  const databaseTools: AnyTool[] =
    options.databases.length > 0
      ? dbTools({
          profile,
          databases: options.databases,
          workingDir: localWorkingDir,
          ...(options.onDatabaseWarning === undefined ? {} : { onWarning: options.onDatabaseWarning }),
        })
      : [];
  own.push(...databaseTools);
  const extra = admitExtraTools(options.extraTools ?? [], {
    profile,
    takenNames: own.map((tool) => tool.name),
    onWarning: options.onWarning,
  });
  const mcpTools = admitMcpTools(options.mcp?.tools ?? [], [...own, ...extra.tools]);

  const ownTools = new WeakSet<object>(own);
  const mcpIdentities = new WeakMap<object, McpRhoTool['mcp']>(mcpTools.map((tool) => [tool, tool.mcp]));
  const proxies = new WeakSet<object>();
  const policyOptions: ApprovalPolicyOptions = {
    isBuiltinTool: (tool: ApprovalSubject) => ownTools.has(tool),
    describeTool: (tool: ApprovalSubject) => {
      const source = extra.sources.get(tool as AnyTool);
      return source === undefined ? tool.name : `${tool.name} (from ${source})`;
    },
    // By identity: only tools that came from the configured MCP servers follow the `mcp:` rules;
    // call_mcp_tool of deferred loading is decided as the tool its arguments name.
    mcpTool: (tool: ApprovalSubject, args?: Record<string, unknown>) =>
      mcpIdentities.get(tool) ?? (proxies.has(tool) ? declaredMcpIdentity(tool, args) : undefined),
  };
  const policy = approvalPolicy(profile, policyOptions);

  const offered: AnyTool[] = [];
  const withheld: WithheldTool[] = [];
  const denied: WithheldTool[] = [];
  for (const tool of mcpTools) {
    const ruling = mcpToolRuling(profile, tool.mcp);
    if (ruling.decision === 'deny') denied.push({ name: tool.name, reason: ruling.reason });
  }
  const deniedNames = new Set(denied.map((tool) => tool.name));
  for (const tool of [...own, ...extra.tools, ...mcpTools.filter((tool) => !deniedNames.has(tool.name))]) {
    const reason = options.approvals === 'none' ? standingApproval(profile, tool, policyOptions) : undefined;
    if (reason === undefined) offered.push(tool);
    else withheld.push({ name: tool.name, reason });
  }
  if (withheld.length > 0 && options.onWithheld !== undefined) {
    options.onWithheld(withheld);
  } else if (withheld.length > 0) {
    const names = withheld.map((tool) => tool.name);
    const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
    options.onWarning?.(
      `${list} ${names.length === 1 ? 'is' : 'are'} not offered: every call of ${names.length === 1 ? 'it' : 'these'} needs approval under profile ${profile.name} and nobody can approve in this run; give the run an approver or auto-approve it to offer ${names.length === 1 ? 'it' : 'them'}.`,
    );
  }

  // Deferred servers: their offered tools leave the list and are found through search_tools.
  const deferredServers = new Set(
    (options.mcp?.servers.configs ?? []).filter((config) => config.defer === true).map((config) => config.name),
  );
  const isDeferred = (tool: AnyTool) => mcpIdentities.has(tool) && deferredServers.has((tool as McpRhoTool).mcp.server);
  const deferred = offered.filter(isDeferred) as McpRhoTool[];
  const listed = offered.filter((tool) => !isDeferred(tool));
  const proxyTools = deferredMcpTools(deferred);
  for (const proxy of proxyTools) {
    if (listed.some((tool) => tool.name === proxy.name)) {
      throw new ConfigError({
        message: `Deferred MCP tools need the tool name ${proxy.name}, which another tool already has. Rename that tool or remove defer from mcp_servers.`,
        field: 'mcp_servers',
      });
    }
    proxies.add(proxy);
  }
  listed.push(...proxyTools);
  const mcpContext: McpContextCost[] = (options.mcp?.servers.names ?? []).map((server) => {
    const tools = offered.filter((tool) => mcpIdentities.has(tool) && (tool as McpRhoTool).mcp.server === server);
    const fullTokens = tools.reduce((sum, tool) => sum + toolSpecTokens(tool), 0);
    const isDeferredServer = deferredServers.has(server);
    return {
      server,
      tools: tools.length,
      deferred: isDeferredServer,
      listedTokens: isDeferredServer ? 0 : fullTokens,
      fullTokens,
    };
  });

  let closed: Promise<void> | undefined;
  const servers = options.mcp?.servers;
  return {
    profile,
    workingDir,
    backend: options.backend,
    tools: listed,
    approvalPolicy: policy,
    withheld: [...denied, ...withheld],
    databases: options.databases,
    mcp: servers,
    mcpContext,
    close: () => (closed ??= Promise.all([closeDbTools(databaseTools), servers?.close()]).then(() => undefined)),
  };
}

/** MCP tools whose names are free (a clash with rho's or an extra tool is a `ConfigError`, as between extra tools). */
function admitMcpTools(tools: readonly McpRhoTool[], taken: readonly AnyTool[]): McpRhoTool[] {
  const names = new Set(taken.map((tool) => tool.name));
  for (const tool of tools) {
    if (names.has(tool.name)) {
      throw new ConfigError({
        message: `MCP tool ${tool.mcp.tool} of server ${tool.mcp.server} would be named ${tool.name}, which is already taken by another tool. Rename the server in mcp_servers.`,
        field: `mcp_servers.${tool.mcp.server}`,
      });
    }
  }
  return [...tools];
}

/** Why every call of a tool needs approval, whatever its arguments (the profile, or the tool's own standing request). */
function standingApproval(
  profile: PermissionProfile,
  tool: AnyTool,
  options: ApprovalPolicyOptions,
): string | undefined {
  if (everyCallNeedsApproval(profile, tool, options))
    return (
      approvalPolicy(profile, options)(tool, {}).reason ?? `profile ${profile.name} requires approval for ${tool.name}`
    );
  // A tool that still asks for approval of every call itself (`requiresApproval: true`).
  const asked: unknown = (tool as { requiresApproval?: unknown }).requiresApproval;
  if (typeof asked !== 'function' && asked) return approvalRequestedByTool(tool, {})?.reason;
  return undefined;
}
