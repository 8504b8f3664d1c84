import yargs from 'yargs';
import type { Argv } from 'yargs';
import { cliVersion } from './cli-files.js';
import { didYouMean } from './did-you-mean.js';
import { EXIT } from './exit-code-map.js';
import { helpEpilogue } from './help-text.js';
import type { Terminal } from './terminal.js';
import { processTerminal } from './terminal.js';
import { registerConfigCommands } from './commands/config-command.js';
import { registerEvalCommands } from './commands/eval-command.js';
import { registerExportCommands } from './commands/export-commands.js';
import { registerFleetCommands } from './commands/fleet-commands.js';
import { registerMcpCommands } from './commands/mcp-command.js';
import { registerMonitorCommands } from './commands/monitor-commands.js';
import { registerQueueCommands } from './commands/queue-commands.js';

/** Runs the `rho` command line; returns the exit code. */
export async function main(
  args: string[],
  terminal: Terminal = processTerminal(),
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  let exitCode: number = EXIT.completed;
  const debug = args.includes('--debug');
  const parser = buildParser(yargs(args), terminal, env, (code) => {
    exitCode = code;
  });
  try {
    checkSubcommandTypo(args);
    await parser.parseAsync();
  } catch (error) {
    // Loaded only on failure: `rho --help` must not load the agent runtime.
    const { describeFailure } = await import('./exit-codes.js');
    const failure = describeFailure(error);
    terminal.stderr.write(`rho: ${failure.message}\n`);
    if (debug && error instanceof Error && error.stack !== undefined) terminal.stderr.write(`${error.stack}\n`);
    return failure.code;
  }
  return exitCode;
}

/**
 * `rho --help` rendered for a terminal `width` columns wide, without running anything (the build
 * renders it ahead for several widths; see scripts/render-help.mjs).
 */
export async function renderHelp(width: number): Promise<string> {
  const parser = buildParser(
    yargs([]),
    { stdout: process.stdout, stderr: process.stderr, color: false },
    {},
    () => {},
    width,
  );
  return `${await parser.getHelp()}\n`;
}

/** What {@link parseArguments} found: the subcommands yargs matched (none for a task) and the parsed options. */
export interface ParsedArguments {
  commands: string[];
  argv: Record<string, unknown>;
}

/**
 * Parses `args` exactly as `rho` would (the same strict parser and subcommand-typo check) and
 * runs nothing: no command's handler, no output. A command or flag the parser refuses throws the
 * `ArgumentError` that `rho` would answer with exit 2; `--help` and `--version` are accepted and
 * print nothing. The documentation's test runs every `rho ...` line of the docs through it.
 */
export async function parseArguments(args: string[]): Promise<ParsedArguments | undefined> {
  const quiet = { write: () => true } as unknown as NodeJS.WritableStream;
  const parser = buildParser(yargs(args), { stdout: quiet, stderr: quiet, color: false }, {}, () => {}, 100);
  let parsed: ParsedArguments | undefined;
  class Parsed extends Error {}
  // After validation, before the command's handler: record what was matched and stop there.
  parser.middleware((argv) => {
    parsed = { commands: argv._.map(String), argv };
    throw new Parsed();
  }, false);
  checkSubcommandTypo(args);
  try {
    await parser.parseAsync(args, {}, () => {});
  } catch (error) {
    if (!(error instanceof Parsed)) throw error;
  }
  return parsed;
}

/** Subcommand names, for "did you mean" (the parser takes any other first word as a task). */
const SUBCOMMANDS = [
  'monitor',
  'ps',
  'watch',
  'cancel',
  'kill',
  'pause',
  'resume',
  'unpause',
  'directive',
  'connect',
  'export',
  'policy',
  'db',
  'fleet',
  'stats',
  'dashboard',
  'submit',
  'tasks',
  'worker',
  'results',
  'config',
];

/**
 * A first word that is one typo away from a subcommand (`rho wacth ab12`) would start an agent
 * with that as its task: when the rest looks like a command's arguments (nothing, a session
 * prefix, `all`, `latest`), it is refused with the suggestion instead.
 */
function checkSubcommandTypo(args: readonly string[]): void {
  const words = args.filter((arg) => !arg.startsWith('-'));
  const first = words[0];
  if (
    first === undefined ||
    args[0] !== first ||
    first.includes(' ') ||
    SUBCOMMANDS.includes(first) ||
    first.length < 3
  )
    return;
  const suggestion = didYouMean(first, SUBCOMMANDS);
  if (suggestion === undefined) return;
  const rest = words.slice(1);
  if (rest.length > 1 || (rest.length === 1 && !/^([0-9a-f-]{3,}|all|latest)$/i.test(rest[0]!))) return;
  throw new ArgumentError(
    `Unknown command '${first}'. Did you mean 'rho ${suggestion}'? (To run '${[first, ...rest].join(' ')}' as a task, use -p "${[first, ...rest].join(' ')}".)`,
  );
}

function buildParser(
  parser: Argv,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
  setExit: (code: number) => void,
  width?: number,
): Argv {
  registerMonitorCommands(parser, terminal, env, setExit);
  registerExportCommands(parser, terminal, env, setExit);
  registerEvalCommands(parser, terminal, env, setExit);
  registerMcpCommands(parser, terminal, env, setExit);
  registerFleetCommands(parser, terminal, env, setExit);
  registerConfigCommands(parser, terminal, env, setExit);
  parser.option('fleet', {
    type: 'string',
    requiresArg: true,
    global: true,
    describe:
      'PostgreSQL url of a fleet: register runs there, and ps/watch/cancel/... see every node (default: $RHO_FLEET_URL, fleet: in the config)',
  });
  parser.command(
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
      const { dashboardCommand } = await import('./commands/dashboard-command.js');
      setExit(
        await dashboardCommand(argv as import('./commands/dashboard-command.js').DashboardArguments, terminal, env),
      );
    },
  );
  registerQueueCommands(parser, terminal, env, setExit);
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
          const { policyCheckCommand } = await import('./commands/policy-command.js');
          setExit(
            await policyCheckCommand(
              argv as unknown as import('./commands/policy-command.js').PolicyCheckArguments,
              terminal,
              env,
            ),
          );
        },
      )
      .demandCommand(1, 'Use: rho policy check --shell "CMD" | --write PATH | --read PATH | --sql "SQL" --dialect D'),
  );
  parser.command('db', 'Check the configured database accounts', (db) =>
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
          const { dbCheckCommand } = await import('./commands/db-command.js');
          setExit(
            await dbCheckCommand(argv as unknown as import('./commands/db-command.js').DbCheckArguments, terminal, env),
          );
        },
      )
      .demandCommand(1, 'Use: rho db check ALIAS [--json]'),
  );
  return parser
    .scriptName('rho')
    .usage('rho [TASK]\n\nRun an agent on a task (one-shot), or open the interactive REPL when no task is given.')
    .command(
      '$0 [task..]',
      'Run one task and exit',
      (command) =>
        command
          .positional('task', { type: 'string', array: true, describe: 'The task, in words (quote it, or use -p)' })
          .option('prompt', { alias: 'p', type: 'string', describe: 'The task (takes precedence over TASK)' })
          .option('model', {
            alias: 'm',
            type: 'string',
            describe: 'Model name (default: $OPENAI_MODEL or gpt-5-mini)',
          })
          .option('base-url', { type: 'string', describe: 'OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)' })
          .option('profile', {
            type: 'string',
            describe:
              'Permission profile: readonly, developer, unrestricted, developer-bash-only, or a YAML path (default: $RHO_PROFILE or readonly)',
          })
          .option('working-dir', {
            alias: 'w',
            type: 'string',
            describe: 'Working directory of the tools (default: current directory)',
          })
          .option('backend', {
            type: 'string',
            describe:
              'Where the file and shell tools run: local, sandbox (a bubblewrap container), daytona (default: $RHO_BACKEND; sandbox for the unrestricted and eval profiles where bubblewrap works, else local)',
          })
          .option('dockerfile', {
            type: 'string',
            describe: 'Daytona: build the sandbox from this Dockerfile (implies --backend daytona)',
          })
          .option('snapshot', {
            type: 'string',
            describe: 'Daytona: create the sandbox from this snapshot (implies --backend daytona)',
          })
          .option('keep-sandbox', {
            type: 'boolean',
            describe: 'Daytona: keep the sandbox when rho exits (default: delete it)',
          })
          .option('system-prompt', {
            alias: 's',
            type: 'string',
            describe: 'Markdown prompt file with YAML frontmatter and template variables',
          })
          .option('var', {
            type: 'string',
            requiresArg: true,
            describe: 'Template variable key=value for the prompt file (repeat --var for each)',
          })
          .option('vars-file', { type: 'string', describe: 'YAML file of template variables' })
          .option('config', { alias: 'c', type: 'string', describe: 'Agent configuration YAML (flags override it)' })
          .option('resume', {
            alias: 'r',
            type: 'string',
            describe: 'Continue a session: latest, an id, a unique id prefix, or a session directory',
          })
          .option('list', { alias: 'l', type: 'boolean', default: false, describe: 'List saved sessions and exit' })
          .option('db-config', {
            type: 'string',
            describe: 'Database aliases YAML (default: $RHO_DB_CONFIG or $RHO_HOME/databases.yaml)',
          })
          .option('tool-package', {
            type: 'string',
            requiresArg: true,
            describe: "Load tools from this package name or path (repeatable; adds to the config's tool_packages)",
          })
          .option('reasoning-effort', {
            type: 'string',
            describe: 'Reasoning effort for reasoning models: none, minimal, low, medium, high, xhigh',
          })
          .option('auto-approve', {
            alias: 'y',
            type: 'boolean',
            default: false,
            describe: 'Approve every tool call without asking',
          })
          .option('when-unattended', {
            type: 'string',
            describe:
              'With nobody at the terminal: wait (a call waits for rho approve / rho deny; the default) or withhold (such tools are not offered)',
          })
          .option('approval-timeout', {
            type: 'string',
            describe: 'How long a call waits for an answer: 30s, 10m, 2h, 1d (default 1h)',
          })
          .option('on-timeout', {
            type: 'string',
            describe: 'What a timeout answers: deny (default) or approve (never for a dangerous pattern)',
          })
          .option('output', {
            alias: 'o',
            type: 'string',
            describe: 'Write the final answer to this file (never overwrites)',
          })
          .option('json', { type: 'boolean', default: false, describe: 'Print every event as one JSON line on stdout' })
          .option('max-turns', { type: 'string', describe: 'Stop after this many model calls' })
          .option('max-tokens', { type: 'string', describe: 'Stop when the session has used this many tokens' })
          .option('max-cost', { type: 'string', describe: 'Stop when the session has cost this many USD' })
          .option('first-byte-timeout', {
            type: 'string',
            describe:
              'Seconds to wait for a model answer to start (default: $RHO_FIRST_BYTE_TIMEOUT or 60; a CPU-hosted model may need minutes)',
          })
          .option('idle-timeout', {
            type: 'string',
            describe: 'Seconds to wait between two chunks of a streamed answer (default: $RHO_IDLE_TIMEOUT or 60)',
          })
          .option('max-answer-time', {
            type: 'string',
            describe:
              'Seconds one model answer may take in all, however steadily it streams (default: $RHO_MAX_ANSWER_TIME or 1200)',
          })
          .option('max-answer-size', {
            type: 'string',
            describe:
              'Characters of text, reasoning and tool arguments one answer may have (default: $RHO_MAX_ANSWER_SIZE or 4194304)',
          })
          .option('max-retries', {
            type: 'string',
            describe:
              'Retries of a failed model request: rate limits, server errors, timeouts (default: $RHO_MAX_RETRIES or 8)',
          })
          .option('context-window', {
            type: 'string',
            describe:
              "The model's context window in tokens, for automatic compaction (default: $RHO_CONTEXT_WINDOW, the config, what the server reports, the known models, else 32768)",
          })
          .option('label', {
            type: 'string',
            requiresArg: true,
            describe: 'A label key=value of the session in the fleet, for rho ps --label and rho stats (repeatable)',
          })
          .option('otel', {
            type: 'string',
            describe:
              'Export OpenTelemetry spans (GenAI conventions) over OTLP/HTTP to this collector (default: $RHO_OTEL_ENDPOINT, otel.endpoint of config.yaml, $OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318)',
          })
          .option('otel-content', {
            type: 'boolean',
            describe: 'With --otel: export prompts, answers and tool arguments and results too (default: not exported)',
          })
          .option('debug', { type: 'boolean', default: false, describe: 'Show stack traces on failures' }),
      async (argv) => {
        const { runCommand } = await import('./commands/run-command.js');
        const { task, ...rest } = argv as unknown as import('./commands/run-command.js').RunArguments & {
          task?: string[];
        };
        // `--otel` takes an optional URL: a word after it that is not one is the task's first word.
        let words = task;
        if (typeof rest.otel === 'string' && rest.otel !== '' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(rest.otel)) {
          words = [rest.otel, ...(task ?? [])];
          rest.otel = '';
        }
        // Repeatable flags (--var, --tool-package, --label) are one value or a list: the settings take either.
        setExit(
          await runCommand(
            {
              ...rest,
              ...(words === undefined ? {} : { prompt: words }),
              p: typeof rest.p === 'string' ? rest.p : undefined,
            },
            terminal,
            env,
          ),
        );
      },
    )
    .version(cliVersion())
    .alias('version', 'V')
    .help()
    .alias('help', 'h')
    .strict()
    .epilogue(helpEpilogue(width ?? Math.min(100, process.stdout.columns ?? 100)))
    .wrap(width ?? Math.min(100, process.stdout.columns ?? 100))
    .fail((message, error) => {
      if (error !== undefined && error !== null) throw error;
      throw new ArgumentError(`${withSuggestion(message, parser)}\nRun 'rho --help' for usage.`);
    })
    .exitProcess(false);
}

/** yargs' "Unknown argument: modle" with "did you mean --model?" added. */
function withSuggestion(message: string, parser: Argv): string {
  const match = /^Unknown arguments?: (.+)$/.exec(message);
  if (match === null) return message;
  const known = Object.keys(
    (parser as unknown as { getOptions(): { key: Record<string, unknown> } }).getOptions().key,
  ).filter((key) => key.length > 1 && !/[A-Z]/.test(key));
  const hints = match[1]!.split(', ').flatMap((word) => {
    const suggestion = didYouMean(word.replace(/^-+/, ''), known);
    return suggestion === undefined ? [] : [`--${word.replace(/^-+/, '')}: did you mean --${suggestion}?`];
  });
  return hints.length === 0 ? message : `${message} (${hints.join('; ')})`;
}

/** Bad command-line arguments (exit code 2). Kept free of imports so parsing stays cheap. */
export class ArgumentError extends Error {
  override readonly name = 'ArgumentError';
}
