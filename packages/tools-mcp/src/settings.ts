/**
 * `@rho/tools-mcp/settings`: the MCP servers' settings section. Light: it validates the servers'
 * settings and loads no SDK.
 */
import { defineSettingsSection, isSecretName, looksLikeCredential, mapping } from '@rho/core/settings';
import type { McpServerConfig } from './server-config.js';
import { parseMcpServerSources } from './server-config.js';

/** The MCP servers of a run, validated, `${ENV}` references resolved. */
export interface McpSettings {
  readonly servers: readonly McpServerConfig[];
}

/**
 * MCP servers: `mcp_servers` of `$RHO_HOME/config.yaml` and of the agent config, the agent
 * config's winning by name (whole, never merged setting by setting). Their credentials (`env`
 * values of a secret's name or that look like one, `headers`, URL passwords) are secrets.
 */
export const mcpSettingsSection = defineSettingsSection({
  name: 'mcp',
  owner: '@rho/tools-mcp',
  description:
    'MCP servers whose tools the profile’s mcp: rules admit; the agent config’s server of a name replaces $RHO_HOME/config.yaml’s, whole.',
  aliases: { mcp: 'mcp_servers', mcpservers: 'mcp_servers', mcp_server: 'mcp_servers', servers: 'mcp_servers' },
  settings: [
    {
      key: 'mcp_servers',
      description: 'MCP servers: name → command/args/env (stdio) or url/headers (streamable HTTP)',
      files: ['home', 'agent'],
      ...mapping('a mapping of server names to settings (command and args, or url)'),
      merge: true,
      why: 'the servers of both files are used; the agent config’s server of a name replaces the global one, whole',
    },
  ],
  build(context): McpSettings {
    const layers = context.layers('mcp_servers');
    const home = layers.find((layer) => layer.kind === 'home');
    const agent = layers.find((layer) => layer.kind === 'agent' || layer.kind === 'saved');
    const servers = parseMcpServerSources(
      [
        { origin: context.homeFile, servers: home?.value },
        { origin: context.agentFile ?? 'agent config', servers: agent?.value },
      ],
      { env: context.env },
    );
    for (const server of servers) {
      const prefix = `mcp_servers.${server.name}`;
      if (server.transport === 'stdio') {
        for (const [variable, value] of Object.entries(server.env))
          if (isSecretName(variable) || looksLikeCredential(value))
            context.secret(`${prefix}.env.${variable}`, value, 1);
      } else {
        for (const [header, value] of Object.entries(server.headers)) {
          context.secret(`${prefix}.headers.${header}`, value, 1);
          // A header's credential alone, when it has a scheme (`Bearer TOKEN`).
          const scheme = /^\s*[A-Za-z-]+\s+(\S+)\s*$/.exec(value);
          if (scheme !== null) context.secret(`${prefix}.headers.${header}`, scheme[1]!, 1);
        }
        context.secretUrl(server.url);
      }
    }
    return { servers };
  },
});
