import yargs from 'yargs';
import type { Argv } from 'yargs';
import { cliVersion } from './cli-files.js';
import { didYouMean } from './did-you-mean.js';
import { EXIT } from './exit-code-map.js';
import { helpEpilogue } from './help-text.js';
import type { Terminal } from './terminal.js';
import { processTerminal } from './terminal.js';
import { registerConfigCommands } from './commands/config-command.js';
import { registerDoctorCommand } from './commands/doctor/doctor-command.js';
import { registerEvalCommands } from './commands/eval-command.js';
import { registerExportCommands } from './commands/export-commands.js';
import { registerFleetCommands } from './commands/fleet-commands.js';
import { registerMcpCommands } from './commands/mcp-command.js';
import { registerMonitorCommands } from './commands/monitor-commands.js';
import { registerQueueCommands } from './commands/queue-commands.js';
import { registerRunCommand } from './commands/run-options.js';
import { registerWorkspaceCommands } from './commands/workspace-commands.js';
import { registerCheckCommands, registerDashboardCommand } from './commands/inspect-commands.js';

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
  'approvals',
  'connect',
  'export',
  'diff',
  'apply',
  'discard',
  'undo',
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
  'doctor',
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
  registerWorkspaceCommands(parser, terminal, env, setExit);
  registerEvalCommands(parser, terminal, env, setExit);
  registerMcpCommands(parser, terminal, env, setExit);
  registerFleetCommands(parser, terminal, env, setExit);
  registerConfigCommands(parser, terminal, env, setExit);
  registerDoctorCommand(parser, terminal, env, setExit);
  parser.option('fleet', {
    type: 'string',
    requiresArg: true,
    global: true,
    describe:
      'PostgreSQL url of a fleet: register runs there, and ps/watch/cancel/... see every node (default: $RHO_FLEET_URL, fleet: in the config)',
  });
  registerDashboardCommand(parser, terminal, env, setExit);
  registerQueueCommands(parser, terminal, env, setExit);
  registerCheckCommands(parser, terminal, env, setExit);
  // `rho [TASK]`, the default command: after the usage line and every subcommand.
  return registerRunCommand(
    parser
      .scriptName('rho')
      .usage('rho [TASK]\n\nRun an agent on a task (one-shot), or open the interactive REPL when no task is given.'),
    terminal,
    env,
    setExit,
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
