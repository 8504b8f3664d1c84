import type { AgentOptions as CoreAgentOptions, AnyTool } from '@rho/core';
import { Agent as CoreAgent, ConfigError } from '@rho/core';
import type { PermissionProfile } from '@rho/permissions';
import type { Toolset, ToolsetOptions } from './create-toolset.js';
import { buildToolset, builtinProfileNamed, createToolset, resolveDatabases } from './create-toolset.js';

/** Options of {@link Agent}: core's agent options, with tools and approval coming from a profile. */
export interface AgentOptions
  extends
    Omit<CoreAgentOptions, 'tools' | 'approvalPolicy'>,
    Pick<
      ToolsetOptions,
      'sandbox' | 'env' | 'delegate' | 'approvals' | 'onWarning' | 'onWithheld' | 'onDatabaseWarning' | 'databases'
    > {
  /**
   * The permission profile: a profile object or a built-in name (`readonly`, `developer`,
   * `unrestricted`, `developer-bash-only`). Profile files and `$RHO_HOME/profiles` names need
   * {@link Agent.create}, which reads files. Default `readonly`.
   */
  profile?: PermissionProfile | string;
  /** The application's own tools, offered next to rho's under the profile's rules (a tool not declared read-only is not offered under `file_write: off`). */
  tools?: readonly AnyTool[];
  /** A toolset made by `createToolset` (instead of `profile`, `databases` and the other toolset options). */
  toolset?: Toolset;
}

/** Options of {@link Agent.create}: also profile files and database config files. */
export interface CreateAgentOptions
  extends Omit<AgentOptions, 'toolset' | 'profile'>, Pick<ToolsetOptions, 'profile' | 'databaseConfig' | 'rhoHome'> {}

const TOOLSET_KEYS = [
  'profile',
  'databases',
  'tools',
  'sandbox',
  'delegate',
  'approvals',
  'onWarning',
  'onWithheld',
  'onDatabaseWarning',
  'env',
] as const;

/**
 * An agent built from a permission profile: the tools the profile allows (file and shell tools
 * with the sandbox and shell gate, `delegate`, the database tools of `databases`, your own
 * `tools`) and the profile's approval policy, the one decision of which calls need approval.
 * It is `@rho/core`'s `Agent` (sessions, `asTool`, `derive` work the same) with a profile.
 *
 * @example
 * const agent = new Agent({ profile: 'developer', workingDir, databases: { shop: { type: 'sqlite', path: 'shop.db' } } });
 * const session = agent.createSession({ approver: (request) => askSomeone(request) });
 * await session.run('How many orders came in today?');
 * await agent.close();
 */
export class Agent extends CoreAgent {
  /** The profile the tools and approvals come from. */
  readonly profile: PermissionProfile;
  /** The tools, the approval policy, and the database connections to release. */
  readonly toolset: Toolset;

  /** @throws ConfigError for a profile name that is not built in (use {@link Agent.create}) or a bad `databases` entry. */
  constructor(options: AgentOptions = {}) {
    for (const key of ['databaseConfig', 'rhoHome'] as const) {
      // Reading files needs waiting, which a constructor cannot do (JavaScript callers get no type error).
      if (key in options)
        throw new ConfigError({
          message: `Agent: ${key} is read from files; use \`await Agent.create({ ${key}, ... })\` instead of new Agent().`,
          field: key,
        });
    }
    const toolset = options.toolset ?? toolsetOf(options);
    if (options.toolset !== undefined) {
      const clashing = TOOLSET_KEYS.filter((key) => options[key] !== undefined);
      if (clashing.length > 0)
        throw new ConfigError({
          message: `Agent: pass either toolset or ${clashing.join(', ')}, not both; the toolset already decided them.`,
          field: clashing[0],
        });
    }
    // The passwords of the database aliases are secrets the model and the trace never see.
    const passwords = toolset.databases.flatMap((database) =>
      database.password === undefined
        ? []
        : [{ name: `databases.${database.alias}.password`, value: database.password }],
    );
    super({
      ...coreOptions(options),
      ...(passwords.length === 0 ? {} : { secrets: [...passwords, ...(options.secrets ?? [])] }),
      tools: toolset.tools,
      approvalPolicy: toolset.approvalPolicy,
      workingDir: toolset.workingDir,
      ...(options.backend === undefined && toolset.backend !== undefined ? { backend: toolset.backend } : {}),
    });
    this.profile = toolset.profile;
    this.toolset = toolset;
  }

  /**
   * Builds the agent with everything that needs reading first: a profile by path or
   * `$RHO_HOME/profiles` name, a `databases.yaml` (`databaseConfig`), and an up-front warning
   * when restricted commands cannot get their sandbox here.
   */
  static async create(options: CreateAgentOptions = {}): Promise<Agent> {
    const toolset = await createToolset({
      ...toolsetOptions(options),
      ...(options.profile === undefined ? {} : { profile: options.profile }),
      ...(options.databaseConfig === undefined ? {} : { databaseConfig: options.databaseConfig }),
      ...(options.rhoHome === undefined ? {} : { rhoHome: options.rhoHome }),
      ...(options.workingDir === undefined ? {} : { workingDir: options.workingDir }),
      ...(options.backend === undefined ? {} : { backend: options.backend }),
      ...(options.databases === undefined ? {} : { databases: options.databases }),
    });
    const rest: AgentOptions = { ...options };
    for (const key of [...TOOLSET_KEYS, 'databaseConfig', 'rhoHome'] as const)
      delete (rest as Record<string, unknown>)[key];
    return new Agent({ ...rest, toolset });
  }

  /** Closes the database connections of the tools. Sessions of this agent must have ended. */
  close(): Promise<void> {
    return this.toolset.close();
  }
}

function toolsetOf(options: AgentOptions): Toolset {
  const profile =
    typeof options.profile === 'object' ? options.profile : builtinProfileNamed(options.profile ?? 'readonly');
  const workingDir = options.workingDir ?? process.cwd();
  const databases = options.databases === undefined ? [] : resolveDatabases(options.databases, workingDir, options.env);
  return buildToolset({
    ...toolsetOptions(options),
    profile,
    databases,
    workingDir,
    ...(options.backend === undefined ? {} : { backend: options.backend }),
  });
}

function toolsetOptions(options: Omit<AgentOptions, 'toolset' | 'profile'>): Omit<ToolsetOptions, 'profile'> {
  return {
    ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }),
    ...(options.env === undefined ? {} : { env: options.env }),
    ...(options.delegate === undefined ? {} : { delegate: options.delegate }),
    ...(options.approvals === undefined ? {} : { approvals: options.approvals }),
    ...(options.onWarning === undefined ? {} : { onWarning: options.onWarning }),
    ...(options.onWithheld === undefined ? {} : { onWithheld: options.onWithheld }),
    ...(options.onDatabaseWarning === undefined ? {} : { onDatabaseWarning: options.onDatabaseWarning }),
    ...(options.tools === undefined || options.tools.length === 0
      ? {}
      : { extraTools: [{ source: 'the tools option', tools: options.tools }] }),
  };
}

/** The options core's Agent takes, without the toolset's. */
function coreOptions(options: AgentOptions): CoreAgentOptions {
  const core: Record<string, unknown> = { ...options };
  for (const key of [...TOOLSET_KEYS, 'toolset']) delete core[key];
  return core as CoreAgentOptions;
}
