import type { Argv } from 'yargs';
import type { Terminal } from '../../terminal.js';

/** Arguments of `rho doctor`. */
export interface DoctorArguments {
  online: boolean;
  json: boolean;
  timeout?: number;
  config?: string;
  [flag: string]: unknown;
}

/**
 * Registers `rho doctor`: checks what the configuration needs and says how to fix what is
 * missing. Only this file loads at start-up; the checks (and the drivers, SDKs and servers they
 * try) load when the command runs.
 */
export function registerDoctorCommand(
  parser: Argv,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
  setExit: (code: number) => void,
): Argv {
  return parser.command(
    'doctor',
    'Check what the configuration needs (Node, $RHO_HOME, disk, bubblewrap, ripgrep, model, databases, fleet, MCP servers), one line each with the fix (exit 0 ready, 1 not)',
    (doctor) =>
      doctor
        .option('online', {
          type: 'boolean',
          default: false,
          describe: 'Also ask the model endpoint (GET /models with the key)',
        })
        .option('json', { type: 'boolean', default: false, describe: 'Print the checks as a JSON array' })
        .option('timeout', {
          type: 'number',
          requiresArg: true,
          describe: 'Seconds one check may take (default 5); the checks run at once',
        })
        // The settings of the run to check, as a run takes them.
        .option('config', { alias: 'c', type: 'string', describe: 'Agent configuration YAML' })
        .option('profile', { type: 'string', describe: 'Permission profile (default: $RHO_PROFILE or readonly)' })
        .option('backend', { type: 'string', describe: 'Execution backend: local, sandbox, daytona' })
        .option('model', { alias: 'm', type: 'string', describe: 'Model name (default: $OPENAI_MODEL or gpt-5-mini)' })
        .option('base-url', { type: 'string', describe: 'OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)' })
        .option('db-config', {
          type: 'string',
          describe: 'Database aliases YAML (default: $RHO_DB_CONFIG or $RHO_HOME/databases.yaml)',
        })
        .option('working-dir', {
          alias: 'w',
          type: 'string',
          describe: 'Working directory (default: current directory)',
        }),
    async (argv) => {
      const { doctorCommand } = await import('./run-doctor.js');
      setExit(await doctorCommand(argv as unknown as DoctorArguments, terminal, env));
    },
  );
}
