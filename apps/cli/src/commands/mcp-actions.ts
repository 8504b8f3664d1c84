import { join } from 'node:path';
import { rhoHome } from '@rho/core';
import { resolveSettings } from '@rho/core/settings';
import type { PermissionProfile } from '@rho/permissions';
import { loadProfile, mcpToolRuling } from '@rho/permissions';
import type { McpServerConfig } from '@rho/tools-mcp';
import { mapCallToolResult, McpServers, mcpToolName, parseMcpServers } from '@rho/tools-mcp';
import { mcpSettingsSection } from '@rho/tools-mcp/settings';
import { UsageError } from '../exit-codes.js';
import type { Terminal } from '../terminal.js';
import { allSections } from '../settings.js';
import type { McpArguments } from './mcp-command.js';

/** The name `--command`/`--url` servers get (also in the options' help). */
const AD_HOC = 'adhoc';

/**
 * The servers the arguments name: `--command`/`--url` alone, else those of `$RHO_HOME/config.yaml`
 * and of `--config` (whose servers win by name), as a run would start them.
 */
export async function serversOf(
  argv: McpArguments,
  env: NodeJS.ProcessEnv,
  warn: (message: string) => void = () => {},
  none: (hint: string) => void = (hint) => {
    throw new UsageError({ message: hint });
  },
): Promise<McpServerConfig[]> {
  const given = [argv.config, argv.command, argv.url].filter((value) => value !== undefined);
  if (given.length > 1)
    throw new UsageError({
      message: 'Give one of --config AGENT.yaml (its mcp_servers), --command "PROGRAM ARGS" or --url URL.',
    });
  if (argv.command !== undefined) {
    const [command, ...args] = argv.command.trim().split(/\s+/);
    if (command === undefined || command === '')
      throw new UsageError({
        message:
          '--command needs a program to run, for example --command "npx -y @modelcontextprotocol/server-everything".',
      });
    return parseMcpServers({ [AD_HOC]: { command, args } }, { env, origin: '--command' });
  }
  if (argv.url !== undefined) return parseMcpServers({ [AD_HOC]: { url: argv.url } }, { env, origin: '--url' });
  // The MCP section of a run's settings: $RHO_HOME/config.yaml's servers, then --config's (winning by name).
  const resolved = await resolveSettings({
    sections: [mcpSettingsSection],
    knownSections: allSections,
    home: rhoHome(env),
    env,
    ...(argv.config === undefined ? {} : { agentConfig: argv.config }),
  });
  for (const warning of resolved.warnings) warn(warning);
  const { servers } = resolved.settings.mcp;
  const files = [
    resolved.files.home?.file ?? join(rhoHome(env), 'config.yaml'),
    ...(resolved.files.agent === undefined ? [] : [resolved.files.agent.file]),
  ];
  if (servers.length === 0)
    none(
      `No MCP servers configured in ${files.join(' or ')}: add mcp_servers (server name: command and args, or url), pass --config AGENT.yaml, or try one with --command or --url.`,
    );
  return [...servers];
}

function pick(servers: McpServerConfig[], name: string | undefined): McpServerConfig {
  if (name === undefined && servers.length === 1) return servers[0]!;
  const server = servers.find((candidate) => candidate.name === (name ?? AD_HOC));
  if (server === undefined) {
    const configured = servers.map((candidate) => candidate.name).join(', ');
    throw new UsageError({
      message:
        name === undefined
          ? `Name the server: ${configured}.`
          : `No MCP server ${JSON.stringify(name)}; configured: ${configured}.`,
    });
  }
  return server;
}

async function profileOf(argv: McpArguments, env: NodeJS.ProcessEnv): Promise<PermissionProfile> {
  return loadProfile(argv.profile ?? env.RHO_PROFILE ?? 'readonly', { rhoHome: rhoHome(env) });
}

function where(server: McpServerConfig): string {
  return server.transport === 'stdio' ? `stdio: ${[server.command, ...server.args].join(' ')}` : `http: ${server.url}`;
}

/** `rho mcp list`: no servers is an answer (exit 0, with the hint on how to add one on stderr). */
export async function mcpListCommand(argv: McpArguments, terminal: Terminal, env: NodeJS.ProcessEnv): Promise<number> {
  const servers = await serversOf(argv, env, warnOn(terminal), (hint) => terminal.stderr.write(`rho: ${hint}\n`));
  if (argv.json)
    terminal.stdout.write(
      `${JSON.stringify(
        servers.map((server) => ({
          name: server.name,
          transport: server.transport,
          ...(server.transport === 'stdio' ? { command: server.command, args: server.args } : { url: server.url }),
        })),
        null,
        2,
      )}\n`,
    );
  else for (const server of servers) terminal.stdout.write(`${server.name}  ${where(server)}\n`);
  return 0;
}

/** `rho mcp tools SERVER`. */
export async function mcpToolsCommand(argv: McpArguments, terminal: Terminal, env: NodeJS.ProcessEnv): Promise<number> {
  const server = pick(await serversOf(argv, env, warnOn(terminal)), argv.server);
  const profile = await profileOf(argv, env);
  const mcp = new McpServers([server]);
  try {
    const tools = await mcp.connection(server.name)!.listTools();
    const rows = tools.map((tool) => {
      const ruling = mcpToolRuling(profile, {
        server: server.name,
        tool: tool.name,
        ...(tool.annotations?.readOnlyHint === undefined ? {} : { readOnlyHint: tool.annotations.readOnlyHint }),
      });
      return {
        name: mcpToolName(server.name, tool.name),
        tool: tool.name,
        decision: ruling.decision,
        reason: ruling.reason,
        readOnlyHint: tool.annotations?.readOnlyHint ?? false,
        description: tool.description ?? '',
        inputSchema: tool.inputSchema,
      };
    });
    if (argv.json) terminal.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    else {
      terminal.stdout.write(
        `${server.name} (${where(server)}): ${rows.length} tools; decisions of profile ${profile.name}\n`,
      );
      for (const row of rows)
        terminal.stdout.write(
          `  ${row.decision.padEnd(5)}  ${row.name}${row.readOnlyHint ? '  [read-only hint]' : ''}\n         ${firstLine(row.description)}\n`,
        );
    }
    return 0;
  } finally {
    await mcp.close();
  }
}

/** `rho mcp call SERVER TOOL --args JSON`: the person running it stands in for the approver; a tool the profile denies is refused. */
export async function mcpCallCommand(argv: McpArguments, terminal: Terminal, env: NodeJS.ProcessEnv): Promise<number> {
  const server = pick(await serversOf(argv, env, warnOn(terminal)), argv.server);
  let args: unknown;
  try {
    args = JSON.parse(argv.args ?? '{}');
  } catch (error) {
    throw new UsageError({
      message: `--args is not JSON (${(error as Error).message}); give an object, for example --args '{"message": "hi"}'.`,
    });
  }
  if (typeof args !== 'object' || args === null || Array.isArray(args))
    throw new UsageError({ message: `--args must be a JSON object, for example --args '{"message": "hi"}'.` });
  const tool = argv.tool as string;
  const profile = await profileOf(argv, env);
  const ruling = mcpToolRuling(profile, { server: server.name, tool });
  if (ruling.decision === 'deny') {
    terminal.stderr.write(`rho: refused: ${ruling.reason}.\n`);
    return 1;
  }
  if (ruling.decision === 'ask' && !argv.json)
    terminal.stderr.write(`note: in a session, ${ruling.reason}; calling it by hand counts as your approval.\n`);
  const mcp = new McpServers([server]);
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  try {
    const raw = await mcp.connection(server.name)!.callTool(tool, args as Record<string, unknown>, controller.signal);
    const result = mapCallToolResult(raw, { server: server.name, tool });
    if (argv.json) terminal.stdout.write(`${JSON.stringify(raw, null, 2)}\n`);
    else terminal.stdout.write(`${result.content}\n`);
    if (!result.success && !argv.json) terminal.stderr.write(`rho: ${tool} of ${server.name} reported an error.\n`);
    return result.success ? 0 : 1;
  } finally {
    process.off('SIGINT', onSignal);
    await mcp.close();
  }
}

/** Warnings (an unknown key of `$RHO_HOME/config.yaml`) go to stderr, as in a run. */
function warnOn(terminal: Terminal): (message: string) => void {
  return (message) => terminal.stderr.write(`Warning: ${message}\n`);
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}
