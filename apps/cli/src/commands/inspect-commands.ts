import type { Argv } from 'yargs';
import type { Terminal } from '../terminal.js';

/**
 * Registers `rho dashboard [dir]`. The handler loads the dashboard's server and page only when it
 * runs: they are not part of start-up.
 */
export function registerDashboardCommand(
  parser: Argv,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
  setExit: (code: number) => void,
): Argv {
  return parser.command(
    'dashboard [dir]',
    'Serve a web dashboard of the sessions on 127.0.0.1: live status, timelines, costs, tools, controls (prints the URL with its access token)',
    (command) =>
      command
        .positional('dir', { type: 'string', describe: 'Sessions directory (default: $RHO_HOME/sessions)' })
        .option('port', { type: 'number', describe: 'Port (default: 7788, or a free one when it is taken)' })
        .option('host', {
          type: 'string',
          describe: 'Address to listen on (default: 127.0.0.1; another address lets other machines in)',
        }),
    async (argv) => {
      // Loaded only when the command runs: the dashboard's server and page are not part of start-up.
      const { dashboardCommand } = await import('./dashboard-command.js');
      setExit(await dashboardCommand(argv as import('./dashboard-command.js').DashboardArguments, terminal, env));
    },
  );
}

/**
 * Registers the checks that run nothing: `rho policy check` (what a permission profile decides)
 * and `rho db check ALIAS` (what a database account can do beyond reading). Their handlers load
 * the permissions and database code only when they run.
 */
export function registerCheckCommands(
  parser: Argv,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
  setExit: (code: number) => void,
): Argv {
  parser.command('policy', 'Ask what a permission profile decides', (policy) =>
    policy
      .command(
        'check',
        'What a profile decides for a shell command, a write path, a read path or an SQL statement, and why (exit 0 allowed, 1 refused)',
        (check) =>
          check
            .option('profile', {
              type: 'string',
              describe: 'Profile name or YAML path (default: $RHO_PROFILE or readonly)',
            })
            .option('shell', { type: 'string', describe: 'A shell command line' })
            .option('write', { type: 'string', describe: 'A path the agent would write' })
            .option('read', {
              type: 'string',
              describe: 'A path the agent would read (the view of the shell sandbox and the file tools)',
            })
            .option('sql', { type: 'string', describe: 'An SQL statement (with --dialect)' })
            .option('dialect', {
              type: 'string',
              choices: ['sqlite', 'postgres', 'mysql', 'oracle', 'vertica'],
              describe: 'SQL dialect',
            })
            .option('working-dir', {
              alias: 'w',
              type: 'string',
              describe: 'Working directory for --write, --read and --shell (default: current directory)',
            })
            .option('via', {
              type: 'string',
              choices: ['write', 'edit', 'export_query'],
              describe: 'The tool that would write, for --write (default: write)',
            })
            .option('json', { type: 'boolean', default: false, describe: 'Print the decision as JSON' }),
        async (argv) => {
          const { policyCheckCommand } = await import('./policy-command.js');
          setExit(
            await policyCheckCommand(
              argv as unknown as import('./policy-command.js').PolicyCheckArguments,
              terminal,
              env,
            ),
          );
        },
      )
      .demandCommand(1, 'Use: rho policy check --shell "CMD" | --write PATH | --read PATH | --sql "SQL" --dialect D'),
  );
  return parser.command('db', 'Check the configured database accounts', (db) =>
    db
      .command(
        'check <alias>',
        "What an alias's configured account can do that it should not for read-only use, with a GRANT script for a least-privilege read account (exit 0 fit, 1 too powerful)",
        (check) =>
          check
            .positional('alias', { type: 'string', demandOption: true, describe: 'Database alias of databases.yaml' })
            .option('db-config', {
              type: 'string',
              describe: 'Database aliases YAML (default: $RHO_DB_CONFIG or $RHO_HOME/databases.yaml)',
            })
            .option('role', {
              type: 'string',
              describe: 'Name of the read account in the GRANT script (default: rho_reader)',
            })
            .option('json', { type: 'boolean', default: false, describe: 'Print the report as JSON' }),
        async (argv) => {
          const { dbCheckCommand } = await import('./db-command.js');
          setExit(await dbCheckCommand(argv as unknown as import('./db-command.js').DbCheckArguments, terminal, env));
        },
      )
      .demandCommand(1, 'Use: rho db check ALIAS [--json]'),
  );
}
