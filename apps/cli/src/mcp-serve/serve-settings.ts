/**
 * `mcp_serve:` of `$RHO_HOME/config.yaml`: what `rho mcp serve` lets its MCP clients do. Only the
 * home file is read (never an agent config or a project's file): a repository must not widen
 * what a client may start.
 */
import { choice, countOfAtLeastOne, defineSettingsSection, listOfText, text } from '@rho/core/settings';

/** The operator's configuration of `rho mcp serve`, as written (not yet checked against the disk). */
export interface McpServeSettings {
  /** Profiles a client may name; unset: `readonly` only. */
  readonly profiles?: readonly string[];
  /** Directories a client's working directory must lie in; unset: the server's working directory. */
  readonly directories?: readonly string[];
  /** The profile of a task that names none; unset: the first allowed. */
  readonly defaultProfile?: string;
  /** What a client's running sessions become when it disconnects. */
  readonly onDisconnect: 'keep' | 'cancel';
  /** Sessions started by this server that may run at once. */
  readonly maxConcurrent: number;
}

const list = listOfText('a list of non-empty strings');

/** `rho mcp serve`'s section: profiles, directories, on_disconnect, max_concurrent, default_profile. */
export const mcpServeSettingsSection = defineSettingsSection({
  name: 'mcpServe',
  owner: '@rho/cli',
  description:
    'What rho mcp serve lets MCP clients start: the profiles and directories they may use (default: the readonly profile, the directory the server runs in), read from $RHO_HOME/config.yaml only.',
  mappings: [{ key: 'mcp_serve', unknownKeys: 'error' }],
  settings: [
    {
      key: 'mcp_serve.profiles',
      description: 'Profiles a client may name in run_task (default: readonly only)',
      files: ['home'],
      ...list,
    },
    {
      key: 'mcp_serve.directories',
      description:
        "Directories a client's working directory must lie in, after symbolic links are resolved; ~/ is the home directory, a relative path the server's working directory (default: the server's working directory)",
      files: ['home'],
      ...list,
    },
    {
      key: 'mcp_serve.default_profile',
      description: 'The profile of a run_task naming none (default: the first of profiles); must be one of profiles',
      files: ['home'],
      ...text('a profile name', true),
    },
    {
      key: 'mcp_serve.on_disconnect',
      description: "What a client's running sessions become when it disconnects: keep (they run on) or cancel",
      files: ['home'],
      ...choice(['keep', 'cancel'] as const),
      default: 'keep',
    },
    {
      key: 'mcp_serve.max_concurrent',
      description: 'Sessions started through the server that may run at once; run_task refuses more',
      files: ['home'],
      ...countOfAtLeastOne(),
      default: 4,
    },
  ],
  build(context): McpServeSettings {
    const profiles = context.value<string[]>('mcp_serve.profiles');
    const directories = context.value<string[]>('mcp_serve.directories');
    const defaultProfile = context.value<string>('mcp_serve.default_profile');
    return {
      ...(profiles === undefined ? {} : { profiles }),
      ...(directories === undefined ? {} : { directories }),
      ...(defaultProfile === undefined ? {} : { defaultProfile }),
      onDisconnect: context.value<'keep' | 'cancel'>('mcp_serve.on_disconnect') ?? 'keep',
      maxConcurrent: context.value<number>('mcp_serve.max_concurrent') ?? 4,
    };
  },
});
