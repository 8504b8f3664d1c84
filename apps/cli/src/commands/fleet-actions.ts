import type { Fleet, FleetStatus } from '@rho/fleet';
import type { SessionSource, SessionStatsRow, SessionStatsView } from '@rho/monitor';
import { EXIT, UsageError } from '../exit-codes.js';
import { formatElapsed } from '../format.js';
import { operatorFleetConfig } from '../fleet/operator-fleet.js';
import type { Terminal } from '../terminal.js';
import { styles } from '../terminal.js';
import type { FleetArguments, FleetRolesArguments, StatsArguments } from './fleet-commands.js';

const NO_FLEET =
  'No fleet is configured: pass --fleet postgres://USER@HOST/DB, set RHO_FLEET_URL, or write fleet: {url: ...} in $RHO_HOME/config.yaml.';

/** The configured fleet's sessions (a UsageError when none is), for `action`; closed after. */
async function withSessions<T>(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  action: (source: SessionSource) => Promise<T>,
): Promise<T> {
  const config = await operatorFleetConfig(flag, env);
  if (config === undefined) throw new UsageError({ message: NO_FLEET });
  const { openFleetSessionSource } = await import('@rho/fleet');
  const source = await openFleetSessionSource(config, { maxConnections: 2, connectTimeoutSeconds: 5 });
  try {
    return await action(source);
  } finally {
    await source.close().catch(() => {});
  }
}

/** Connects to the configured fleet (a UsageError when none is), runs `action`, closes. */
async function withFleet<T>(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
  action: (fleet: Fleet) => Promise<T>,
): Promise<T> {
  const config = await operatorFleetConfig(flag, env);
  if (config === undefined) throw new UsageError({ message: NO_FLEET });
  const { connectFleet } = await import('@rho/fleet');
  const fleet = await connectFleet(config, { maxConnections: 2, connectTimeoutSeconds: 5 });
  try {
    return await action(fleet);
  } finally {
    await fleet.close().catch(() => {});
  }
}

/** `rho fleet migrate`: brings the schema to the latest version. */
export async function fleetMigrateCommand(
  argv: FleetArguments,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  return withFleet(argv.fleet, env, async (fleet) => {
    const result = await fleet.migrate();
    if (argv.json) terminal.stdout.write(`${JSON.stringify({ schema: fleet.config.schema, ...result })}\n`);
    else
      terminal.stdout.write(
        result.from === result.to
          ? `Schema ${fleet.config.schema} is up to date (version ${result.to}).\n`
          : `Migrated schema ${fleet.config.schema} from version ${result.from} to ${result.to}.\n`,
      );
    return EXIT.completed;
  });
}

/**
 * `rho fleet roles`: the GRANT script for the configured fleet's schema (the default schema
 * without a fleet configured), to run as the schema's owner after `rho fleet migrate`. Needs no
 * connection.
 */
export async function fleetRolesCommand(
  argv: FleetRolesArguments,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const config = await operatorFleetConfig(argv.fleet, env);
  const { fleetRolesSql } = await import('@rho/fleet');
  let sql: string;
  try {
    sql = fleetRolesSql({
      ...(config === undefined ? {} : { schema: config.schema }),
      ...(argv.agentRole === undefined ? {} : { agentRole: argv.agentRole }),
      ...(argv.operatorRole === undefined ? {} : { operatorRole: argv.operatorRole }),
    });
  } catch (error) {
    // A role name that is not a plain identifier: the user's to fix.
    throw new UsageError({
      message: `${(error as Error).message.replace(/\.$/, '')} (--agent-role, --operator-role).`,
    });
  }
  terminal.stdout.write(sql.endsWith('\n') ? sql : `${sql}\n`);
  return EXIT.completed;
}

/** `rho fleet status`: connection, schema version, sessions per status and per node. */
export async function fleetStatusCommand(
  argv: FleetArguments,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  return withFleet(argv.fleet, env, async (fleet) => {
    const status = await fleet.status();
    const current = status.schemaVersion >= status.latestVersion;
    if (argv.json) terminal.stdout.write(`${JSON.stringify(status)}\n`);
    else terminal.stdout.write(formatStatus(status, terminal.color && terminal.stdout.isTTY === true));
    if (!current && !argv.json)
      terminal.stderr.write(
        `rho: the fleet's schema is ${status.schemaVersion === 0 ? 'not created yet' : `at version ${status.schemaVersion}, older than ${status.latestVersion}`}; run rho fleet migrate.\n`,
      );
    return current ? EXIT.completed : EXIT.badInput;
  });
}

function formatStatus(status: FleetStatus, color: boolean): string {
  const style = styles(color);
  const counts = Object.entries(status.byStatus)
    .filter(([, count]) => count > 0)
    .map(([name, count]) => `${name} ${count}`)
    .join(', ');
  const lines = [
    `${style.bold('Fleet:')}    ${status.url} (schema ${status.schema})`,
    `${style.bold('Server:')}   ${status.serverVersion}`,
    `${style.bold('Schema:')}   version ${status.schemaVersion} (latest ${status.latestVersion})`,
    `${style.bold('Sessions:')} ${counts === '' ? 'none yet' : counts}`,
  ];
  if (status.byHost.length > 0) {
    const now = Date.now();
    lines.push(
      '',
      table(
        ['HOST', 'SESSIONS', 'LIVE', 'LAST HEARTBEAT'],
        status.byHost.map((host) => [
          host.host,
          String(host.sessions),
          String(host.live),
          host.lastHeartbeatAt === undefined
            ? '-'
            : `${formatElapsed(Math.max(0, now - Date.parse(host.lastHeartbeatAt))).replace(/^\d+ms$/, '0s')} ago`,
        ]),
        [false, true, true, false],
        style.bold,
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The views `rho stats VIEW [--by ...]` names, in the order `all` prints them. */
function viewsOf(view: string | undefined, by: string | undefined): SessionStatsView[] {
  if (by !== undefined && view !== undefined && view !== 'cost' && view !== 'tokens' && view !== 'all')
    throw new UsageError({ message: `--by applies to the cost (tokens) view only: rho stats cost --by ${by}.` });
  const cost = `cost_by_${by ?? 'model'}` as SessionStatsView;
  switch (view) {
    case 'cost':
    case 'tokens':
      return [cost];
    case 'tools':
      return ['tool_calls'];
    case 'latency':
      return ['model_latency'];
    case 'status':
      return ['sessions_by_status'];
    default:
      return ['sessions_by_status', cost, 'tool_calls', 'model_latency'];
  }
}

const TITLES: Record<SessionStatsView, string> = {
  sessions_by_status: 'Sessions by status',
  cost_by_model: 'Cost and tokens by model',
  cost_by_profile: 'Cost and tokens by profile',
  cost_by_label: 'Cost and tokens by label',
  cost_by_day: 'Cost and tokens by day',
  tool_calls: 'Tool calls and failures by tool',
  model_latency: 'Model latency (ms)',
};

/** `rho stats`: the telemetry views of the fleet's sessions as tables (or JSON: one object per view, its rows). */
export async function statsCommand(argv: StatsArguments, terminal: Terminal, env: NodeJS.ProcessEnv): Promise<number> {
  const views = viewsOf(argv.view, argv.by);
  if (argv.limit !== undefined && (!Number.isInteger(argv.limit) || argv.limit <= 0))
    throw new UsageError({ message: `--limit must be a whole number above 0 (got ${argv.limit}).` });
  return withSessions(argv.fleet, env, async (source) => {
    if (source.stats === undefined) throw new UsageError({ message: NO_FLEET });
    const results: [SessionStatsView, SessionStatsRow[]][] = [];
    for (const view of views)
      results.push([view, await source.stats(view, argv.limit === undefined ? {} : { limit: argv.limit })]);
    if (argv.json) {
      terminal.stdout.write(`${JSON.stringify(Object.fromEntries(results))}\n`);
      return EXIT.completed;
    }
    const style = styles(terminal.color && terminal.stdout.isTTY === true);
    const blocks = results.map(([view, rows]) => {
      if (rows.length === 0) return `${style.bold(TITLES[view])}\n(no data yet)`;
      const columns = Object.keys(rows[0]!);
      const numeric = columns.map((column) =>
        rows.every((row) => typeof row[column] === 'number' || row[column] === null),
      );
      return `${style.bold(TITLES[view])}\n${table(
        columns.map((column) => column.toUpperCase()),
        rows.map((row) => columns.map((column) => statsCell(column, row[column]))),
        numeric,
        style.bold,
      )}`;
    });
    terminal.stdout.write(`${blocks.join('\n\n')}\n`);
    return EXIT.completed;
  });
}

/**
 * One value of a stats row as printed, every number through one format (en-US, thousands
 * separated): costs in dollars (4 decimals), rates in percent (1 decimal), milliseconds and
 * counts whole, other numbers with 1 decimal.
 */
export function statsCell(column: string, value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'string') return value;
  const grouped = (number: number, digits: number) =>
    number.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  if (/cost|usd/i.test(column)) return `$${grouped(value, 4)}`;
  if (/rate|ratio/i.test(column)) return `${grouped(value * 100, 1)}%`;
  if (/(^|_)ms$|millis/i.test(column) || Number.isInteger(value)) return grouped(value, 0);
  return grouped(value, 1);
}

/** A plain table: a header, then rows; `right` columns aligned to the right. */
function table(
  header: string[],
  rows: string[][],
  right: boolean[],
  bold: (text: string) => string = (text) => text,
): string {
  const widths = header.map((title, index) => Math.max(title.length, ...rows.map((row) => row[index]!.length)));
  const line = (row: string[]) =>
    row
      .map((value, index) => (right[index] === true ? value.padStart(widths[index]!) : value.padEnd(widths[index]!)))
      .join('  ')
      .trimEnd();
  return [bold(line(header)), ...rows.map(line)].join('\n');
}
