import type { Argv } from 'yargs';
import type { Terminal } from '../terminal.js';

/** Arguments of `rho fleet migrate|status`. */
export interface FleetArguments {
  fleet?: string;
  json: boolean;
}

/** Arguments of `rho fleet roles`. */
export interface FleetRolesArguments {
  fleet?: string;
  agentRole?: string;
  operatorRole?: string;
}

/** Arguments of `rho stats`. */
export interface StatsArguments {
  fleet?: string;
  view?: string;
  by?: string;
  limit?: number;
  json: boolean;
}

/**
 * Registers `rho fleet migrate`, `rho fleet status` and `rho stats`. The handlers load
 * `@rho/fleet` (and the PostgreSQL driver) only when they run, so other commands and `--help`
 * stay fast.
 */
export function registerFleetCommands(
  parser: Argv,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
  setExit: (code: number) => void,
): Argv {
  const json = { type: 'boolean', default: false, describe: 'Print JSON' } as const;
  return parser
    .command('fleet', 'Set up and inspect the fleet database (rho fleet migrate|status|roles)', (fleet) =>
      fleet
        .command(
          'migrate',
          "Create or upgrade the fleet's schema in PostgreSQL (idempotent; safe from several nodes at once)",
          (command) => command.option('json', json),
          async (argv) => {
            const { fleetMigrateCommand } = await import('./fleet-actions.js');
            setExit(await fleetMigrateCommand(argv as unknown as FleetArguments, terminal, env));
          },
        )
        .command(
          'status',
          'The connection, schema version and sessions per status and per node (exit 2 when the schema needs rho fleet migrate)',
          (command) => command.option('json', json),
          async (argv) => {
            const { fleetStatusCommand } = await import('./fleet-actions.js');
            setExit(await fleetStatusCommand(argv as unknown as FleetArguments, terminal, env));
          },
        )
        .command(
          'roles',
          "Print the SQL that creates the fleet's roles (agents, operators) and their GRANTs, for the configured schema",
          (command) =>
            command
              .option('agent-role', { type: 'string', describe: 'Group role of agents (default: rho_fleet_agent)' })
              .option('operator-role', {
                type: 'string',
                describe: 'Group role of operators (default: rho_fleet_operator)',
              }),
          async (argv) => {
            const { fleetRolesCommand } = await import('./fleet-actions.js');
            setExit(await fleetRolesCommand(argv as unknown as FleetRolesArguments, terminal, env));
          },
        )
        .demandCommand(1, 'Use: rho fleet migrate | rho fleet status | rho fleet roles'),
    )
    .command(
      'stats [view]',
      "The fleet's telemetry as tables: cost and tokens, tool calls and failures, model latency, sessions by status",
      (command) =>
        command
          .positional('view', {
            type: 'string',
            choices: ['cost', 'tokens', 'tools', 'latency', 'status', 'all'],
            describe: 'Which view (default: all)',
          })
          .option('by', {
            type: 'string',
            choices: ['model', 'profile', 'label', 'day'],
            describe: 'Group cost and tokens by this (default: model)',
          })
          .option('limit', { alias: 'n', type: 'number', describe: 'At most this many rows per view (default 100)' })
          .option('json', json),
      async (argv) => {
        const { statsCommand } = await import('./fleet-actions.js');
        setExit(await statsCommand(argv as unknown as StatsArguments, terminal, env));
      },
    );
}
