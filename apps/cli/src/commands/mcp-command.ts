import type { Argv } from 'yargs';
import type { Terminal } from '../terminal.js';

/** Arguments shared by `rho mcp list|tools|call`. */
export interface McpArguments {
  /** The agent config whose `mcp_servers` to use, with those of `$RHO_HOME/config.yaml`. */
  config?: string;
  /** A server to try without a config: a command line (stdio) ... */
  command?: string;
  /** ... or a streamable HTTP URL. */
  url?: string;
  /** Profile whose `mcp:` rules `tools` and `call` apply. */
  profile?: string;
  json: boolean;
  /** `tools` and `call`: the server. */
  server?: string;
  /** `call`: the tool, as the server names it. */
  tool?: string;
  /** `call`: the arguments, as a JSON object. */
  args?: string;
}

/**
 * Registers `rho mcp list|tools|call|serve`: try MCP servers by hand, with the servers of
 * `$RHO_HOME/config.yaml` and an agent config (`--config`, its `mcp_servers`, winning by name),
 * or one given on the command line (`--command`/`--url`); and serve rho to MCP clients.
 */
export function registerMcpCommands(
  parser: Argv,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
  setExit: (code: number) => void,
): Argv {
  const common = (command: Argv) =>
    command
      .option('config', {
        alias: 'c',
        type: 'string',
        describe: "Agent config YAML whose mcp_servers to use (besides $RHO_HOME/config.yaml's; its own win by name)",
      })
      .option('command', { type: 'string', describe: 'A stdio server command line to try instead (named adhoc)' })
      .option('url', { type: 'string', describe: 'A streamable HTTP server URL to try instead (named adhoc)' })
      .option('profile', {
        type: 'string',
        describe: 'Profile whose mcp: rules apply (default: $RHO_PROFILE or readonly)',
      })
      .option('json', { type: 'boolean', default: false, describe: 'Print JSON' });
  // The actions load the MCP SDK and the runtime only when a subcommand runs: `rho --help` stays fast.
  const run = (name: 'mcpListCommand' | 'mcpToolsCommand' | 'mcpCallCommand') => async (argv: unknown) => {
    const actions = await import('./mcp-actions.js');
    setExit(await actions[name](argv as McpArguments, terminal, env));
  };
  return parser.command(
    'mcp',
    'Try MCP servers by hand (rho mcp list|tools|call), or serve rho (rho mcp serve)',
    (mcp) =>
      mcp
        .command('list', 'The configured MCP servers', common, run('mcpListCommand'))
        .command(
          'tools [server]',
          "A server's tools (it is started), with what the profile decides for each; the server may be left out when only one is configured",
          (command) => common(command).positional('server', { type: 'string', describe: 'Server name' }),
          run('mcpToolsCommand'),
        )
        .command(
          'call <server> <tool>',
          'Call one tool with JSON arguments and print its result (exit 0 success, 1 tool error or refused)',
          (command) =>
            common(command)
              .positional('server', { type: 'string', describe: 'Server name' })
              .positional('tool', { type: 'string', describe: 'Tool name, as the server names it' })
              .option('args', { alias: 'a', type: 'string', default: '{}', describe: 'Arguments as a JSON object' }),
          run('mcpCallCommand'),
        )
        .command(
          'serve',
          'Serve rho itself to MCP clients: run_task, session_status, session_output, list_sessions, cancel_session, send_directive, answer_approval, policy_check (profiles and directories: mcp_serve of $RHO_HOME/config.yaml)',
          (command) =>
            command
              .option('http', { type: 'boolean', default: false, describe: 'Streamable HTTP at /mcp instead of stdio' })
              .option('host', { type: 'string', describe: 'HTTP: address to listen on (default 127.0.0.1)' })
              .option('port', { type: 'number', describe: 'HTTP: port (default 7790; 0: any free one)' })
              .option('token-file', {
                type: 'string',
                describe:
                  'HTTP: the bearer token is read from this file, or made and written there when it does not exist',
              })
              .option('profile', {
                type: 'string',
                array: true,
                describe: 'Allow only these of mcp_serve.profiles (narrows, never widens)',
              })
              .option('dir', {
                type: 'string',
                array: true,
                describe: 'Allow only these directories, inside mcp_serve.directories (narrows, never widens)',
              }),
          async (argv) => {
            const { mcpServeCommand } = await import('../mcp-serve/serve-action.js');
            setExit(
              await mcpServeCommand(
                argv as unknown as import('../mcp-serve/serve-action.js').McpServeArguments,
                terminal,
                env,
              ),
            );
          },
        )
        .demandCommand(
          1,
          'Use: rho mcp list | rho mcp tools SERVER | rho mcp call SERVER TOOL --args JSON | rho mcp serve [--http]',
        ),
  );
}
