// A minimal MCP server on the official SDK's low-level Server, for one thing the public servers
// cannot show: that a cancelled call reaches the server. Its `wait` tool blocks until the request
// is cancelled, then writes "cancelled" to the file named by PROBE_FILE.
import { writeFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'cancel-probe', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [
    {
      name: 'wait',
      description: 'Waits until cancelled.',
      inputSchema: { type: 'object', properties: {} },
      annotations: { readOnlyHint: true },
    },
  ],
}));
server.setRequestHandler(CallToolRequestSchema, async (_request, extra) => {
  writeFileSync(process.env.PROBE_FILE, 'started');
  await new Promise((resolve) => extra.signal.addEventListener('abort', resolve, { once: true }));
  writeFileSync(process.env.PROBE_FILE, 'cancelled');
  return { content: [{ type: 'text', text: 'cancelled' }] };
});
await server.connect(new StdioServerTransport());
