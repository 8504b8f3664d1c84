import type { DoctorContext } from './doctor-settings.js';
import { bounded, result, seconds, type CheckResult } from './report.js';

/**
 * One check per database alias of the run (the agent config's `databases`, else `--db-config`,
 * `$RHO_DB_CONFIG`, `$RHO_HOME/databases.yaml`, rho-agent's): its driver package loads (only
 * here, never at start-up), and the server answers a connection and `SELECT 1` as the alias's
 * account within the timeout. None configured: skipped.
 */
export async function databaseChecks(context: DoctorContext): Promise<CheckResult[]> {
  const [{ workingDirSettingsSection }, { databaseSettingsSection }] = await Promise.all([
    import('@rho/core/settings'),
    import('@rho/tools-db/settings'),
  ]);
  const resolved = await context.settings([workingDirSettingsSection, databaseSettingsSection]);
  const { aliases, file } = resolved.settings.databases;
  const from = file === undefined ? 'the agent config' : file;
  if (aliases.length === 0)
    return [
      result(
        'database',
        'skip',
        `no database aliases configured (--db-config, $RHO_DB_CONFIG, $RHO_HOME/databases.yaml or databases: of the agent config)`,
      ),
    ];
  const { probeDatabase } = await import('@rho/tools-db');
  return (
    await Promise.all(
      aliases.map((alias) =>
        bounded(`database:${alias.alias}`, context.timeoutMs + 500, async () => {
          const probe = await probeDatabase(alias, { timeoutMs: context.timeoutMs });
          const who = `${probe.label} database ${alias.alias} (${probe.target}${probe.user === undefined ? '' : `, as ${probe.user}`}; ${from})`;
          const text = (message: string | undefined) => resolved.redactor.text(message ?? '');
          switch (probe.status) {
            case 'ok':
              return [result(`database:${alias.alias}`, 'ok', `${who} answers (${probe.elapsedMs} ms)`)];
            case 'driver_missing':
              return [
                result(
                  `database:${alias.alias}`,
                  'fail',
                  `${who}: its driver package ${probe.driverPackage} is not installed`,
                  `npm install ${probe.driverPackage} (or pnpm add / yarn add) next to rho`,
                ),
              ];
            case 'driver_failed':
              return [
                result(
                  `database:${alias.alias}`,
                  'fail',
                  `${who}: ${text(probe.message)}`,
                  `reinstall ${probe.driverPackage} for this Node (npm rebuild ${probe.driverPackage})`,
                ),
              ];
            case 'timeout':
              return [
                result(
                  `database:${alias.alias}`,
                  'fail',
                  `${who} did not answer within ${seconds(context.timeoutMs)}`,
                  'check the host and port (a firewall that drops packets looks like this), and that the server runs',
                ),
              ];
            case 'unreachable':
              return [
                result(
                  `database:${alias.alias}`,
                  'fail',
                  `${who} does not answer: ${text(probe.message)}`,
                  `check that the server runs and the alias's host, port, database, user and password in ${from}`,
                ),
              ];
          }
        }),
      ),
    )
  ).flat();
}

/**
 * The fleet, when one is configured (`--fleet`, `$RHO_FLEET_URL`, `fleet:`): its database
 * answers within the timeout, and its schema is at the version this rho's migrations end at.
 * Older (or none): a run's registration fails, so a failure with `rho fleet migrate`. Newer:
 * a later rho migrated it; this one keeps working, with a warning to upgrade.
 */
export async function fleetCheck(context: DoctorContext): Promise<CheckResult> {
  const { fleetSettingsSection } = await import('@rho/fleet/settings');
  const resolved = await context.settings([fleetSettingsSection]);
  const config = resolved.settings.fleet.config;
  if (config === undefined)
    return result('fleet', 'skip', 'no fleet configured (--fleet, $RHO_FLEET_URL, fleet: in $RHO_HOME/config.yaml)');
  const { connectFleet, LATEST_SCHEMA_VERSION, redactUrl } = await import('@rho/fleet');
  const where = `${redactUrl(config.url)}, schema ${config.schema}`;
  let fleet;
  try {
    fleet = await connectFleet(config, {
      maxConnections: 1,
      connectTimeoutSeconds: Math.max(1, Math.ceil(context.timeoutMs / 1000)),
      statementTimeoutMs: context.timeoutMs,
      lockTimeoutMs: context.timeoutMs,
    });
  } catch (error) {
    return result(
      'fleet',
      'fail',
      resolved.redactor.text((error as Error).message),
      'check the fleet url (--fleet, RHO_FLEET_URL or fleet.url), the server and the credentials',
    );
  }
  try {
    const version = await fleet.schemaVersion();
    if (version === LATEST_SCHEMA_VERSION)
      return result('fleet', 'ok', `${where}: answers, schema at version ${version} as this rho expects`);
    if (version > LATEST_SCHEMA_VERSION)
      return result(
        'fleet',
        'warn',
        `${where}: schema at version ${version}, newer than the ${LATEST_SCHEMA_VERSION} of this rho (a later rho migrated it)`,
        'upgrade rho on this node',
      );
    return result(
      'fleet',
      'fail',
      version === 0
        ? `${where}: answers, but has no fleet schema (this rho needs version ${LATEST_SCHEMA_VERSION})`
        : `${where}: schema at version ${version}, this rho needs ${LATEST_SCHEMA_VERSION}`,
      'rho fleet migrate (once, from any node)',
    );
  } finally {
    await fleet.close().catch(() => undefined);
  }
}

/**
 * One check per MCP server of the run (`mcp_servers` of `$RHO_HOME/config.yaml` and the agent
 * config): it starts (or, over HTTP, connects) and lists its tools within the timeout, then is
 * closed. None configured: skipped.
 */
export async function mcpChecks(context: DoctorContext): Promise<CheckResult[]> {
  const { mcpSettingsSection } = await import('@rho/tools-mcp/settings');
  const resolved = await context.settings([mcpSettingsSection]);
  const { servers } = resolved.settings.mcp;
  if (servers.length === 0)
    return [
      result('mcp', 'skip', 'no MCP servers configured (mcp_servers in $RHO_HOME/config.yaml or the agent config)'),
    ];
  const { McpServers } = await import('@rho/tools-mcp');
  return (
    await Promise.all(
      servers.map((server) => {
        const name = `mcp:${server.name}`;
        const what =
          server.transport === 'stdio'
            ? `MCP server ${server.name} (${server.command})`
            : `MCP server ${server.name} (${resolved.redactor.text(server.url)})`;
        return bounded(
          name,
          context.timeoutMs + 500,
          async (signal) => {
            const mcp = new McpServers([server]);
            const stop = AbortSignal.any([signal, AbortSignal.timeout(context.timeoutMs)]);
            try {
              const tools = await mcp.connection(server.name)!.listTools(stop);
              const names = tools.map((tool) => tool.name);
              const shown = names.slice(0, 6).join(', ') + (names.length > 6 ? `, and ${names.length - 6} more` : '');
              return [
                result(
                  name,
                  names.length === 0 ? 'warn' : 'ok',
                  names.length === 0
                    ? `${what} started, and offers no tools`
                    : `${what} lists ${names.length} tool${names.length === 1 ? '' : 's'}: ${shown}`,
                ),
              ];
            } catch (error) {
              const message = stop.aborted
                ? `${what} did not list its tools within ${seconds(context.timeoutMs)}`
                : `${what}: ${(error as Error).message}`;
              return [
                result(
                  name,
                  'fail',
                  resolved.redactor.text(message),
                  `try it by hand: rho mcp tools ${server.name} (a run waits up to its startup_timeout; rho doctor --timeout SECONDS waits longer)`,
                ),
              ];
            } finally {
              void mcp.close().catch(() => undefined);
            }
          },
          what,
        );
      }),
    )
  ).flat();
}
