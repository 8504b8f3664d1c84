import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { registerPolicyCheck } from './policy-tool.js';
import { registerRunTask } from './run-task-tool.js';
import type { ServeContext } from './serve-context.js';
import { registerSessionControls, registerSessionViews } from './session-tools.js';

/** One client connection's MCP server: every tool, the client's name as its sessions' label. */
export function connectionServer(context: ServeContext, connection: number, version: string): McpServer {
  const server = new McpServer(
    { name: 'rho', version },
    {
      instructions:
        'rho runs agent sessions. run_task starts one (under a profile and in a directory the operator allows); session_status, session_output and list_sessions follow them; cancel_session, send_directive and answer_approval steer them; policy_check says what a profile allows.',
    },
  );
  const client = () => server.server.getClientVersion()?.name ?? 'unknown';
  registerRunTask(server, context, connection, client);
  registerSessionViews(server, context);
  registerSessionControls(server, context, client);
  registerPolicyCheck(server, context);
  return server;
}
