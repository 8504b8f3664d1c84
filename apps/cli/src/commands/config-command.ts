import type { Argv } from 'yargs';
import type { Terminal } from '../terminal.js';

/** Arguments of `rho config show`. */
export interface ConfigShowArguments {
  sources: boolean;
  json: boolean;
  config?: string;
  resume?: string;
  [flag: string]: unknown;
}

/**
 * Registers `rho config show`: the settings a run would use, resolved as a run resolves them
 * (flags, environment, the agent config or a resumed session, `$RHO_HOME/config.yaml`), secrets
 * redacted; with `--sources`, where each came from. A run's flags are taken too, so
 * `rho config show --model m --sources` shows what `--model m` changes.
 */
export function registerConfigCommands(
  parser: Argv,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
  setExit: (code: number) => void,
): Argv {
  return parser.command('config', 'Show the settings a run uses and where each comes from', (config) =>
    config
      .command(
        'show',
        "The resolved settings of a run (secrets redacted): flags > environment > the agent config (or a resumed session's) > $RHO_HOME/config.yaml > defaults, with the exceptions docs/settings.md lists",
        (show) =>
          show
            .option('sources', { type: 'boolean', default: false, describe: 'Say where each value came from' })
            .option('json', { type: 'boolean', default: false, describe: 'Print the settings as JSON' })
            .option('config', { alias: 'c', type: 'string', describe: 'Agent configuration YAML' })
            .option('resume', {
              alias: 'r',
              type: 'string',
              describe: "A session whose saved settings take the agent config's place (latest, an id, a prefix)",
            })
            // A run's flags (--model, --max-turns, ...) are taken as they would be by the run.
            .strict(false),
        async (argv) => {
          setExit(await configShowCommand(argv as unknown as ConfigShowArguments, terminal, env));
        },
      )
      .demandCommand(1, 'Use: rho config show [--sources] [--json] [--config FILE] [-r SESSION]'),
  );
}

/** Runs `rho config show`; returns the exit code. */
export async function configShowCommand(
  argv: ConfigShowArguments,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const [
    { readSessionSettings, resolveSettings },
    { rhoHome, SessionStore },
    { resolveSessionWithRhoAgent },
    settings,
    { join },
  ] = await Promise.all([
    import('@rho/core/settings'),
    import('@rho/core'),
    import('@rho/core/internal'),
    import('../settings.js'),
    import('node:path'),
  ]);
  const { loadDotenv } = await import('../dotenv.js');
  loadDotenv(env);
  const home = rhoHome(env);
  const resumed =
    argv.resume === undefined
      ? undefined
      : readSessionSettings(
          resolveSessionWithRhoAgent(new SessionStore(join(home, 'sessions')), argv.resume).directory,
        );
  const resolved = await resolveSettings({
    sections: settings.allSections,
    home,
    env,
    overrides: settings.settingsOverrides(argv),
    ...(resumed !== undefined ? { resumed } : argv.config === undefined ? {} : { agentConfig: argv.config }),
  });
  for (const warning of resolved.warnings) terminal.stderr.write(`Warning: ${warning}\n`);
  const rows = settings.allSections.flatMap((section) =>
    section.settings.map((setting) => {
      const value =
        setting.secret === true && resolved.values[setting.key] !== undefined
          ? '[secret]'
          : resolved.values[setting.key];
      return {
        section: section.name,
        key: setting.key,
        value: resolved.redactor(value),
        source: resolved.sources[setting.key],
      };
    }),
  );
  if (argv.json) {
    const set = rows.filter((row) => row.value !== undefined);
    terminal.stdout.write(
      `${JSON.stringify(
        {
          settings: Object.fromEntries(set.map((row) => [row.key, row.value])),
          ...(argv.sources ? { sources: Object.fromEntries(set.map((row) => [row.key, row.source])) } : {}),
        },
        null,
        2,
      )}\n`,
    );
    return 0;
  }
  let section: string | undefined;
  const lines: string[] = [];
  for (const row of rows) {
    if (row.section !== section) {
      section = row.section;
      lines.push(`${lines.length === 0 ? '' : '\n'}[${section}]`);
    }
    const value = row.value === undefined ? '-' : typeof row.value === 'string' ? row.value : JSON.stringify(row.value);
    lines.push(`${row.key}: ${value}${argv.sources && row.source !== undefined ? `  (${row.source})` : ''}`);
  }
  terminal.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
