import type { Argv } from 'yargs';
import type { Terminal } from '../terminal.js';

interface DirArguments {
  dir?: string;
}

/** The monitor console (`rho monitor`) running these commands: its directory, and what stops a command. */
export interface MonitorConsole {
  /** The sessions directory the console was opened on (the default for every command). */
  directory: string;
  /** Aborted by Ctrl+C in the console: stops a watch or a coordinator, never an agent. */
  signal: () => AbortSignal;
}

/**
 * Registers the monitor subcommands: `monitor`, `ps`, `watch`, `cancel` (alias `kill`), `pause`,
 * `resume` (alias `unpause`), `directive`, `connect`. The handlers load `@rho/monitor` only when
 * they run, so other commands (and `--help`) stay fast. DIR defaults to `$RHO_HOME/sessions`.
 * The monitor console parses its lines with these same commands (`monitorConsole`), without
 * `monitor` itself and with its directory as the default.
 */
export function registerMonitorCommands(
  parser: Argv,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
  setExit: (code: number) => void,
  monitorConsole?: MonitorConsole,
): Argv {
  const dirOption = {
    alias: 'd',
    type: 'string',
    describe: 'Sessions directory (default: $RHO_HOME/sessions)',
  } as const;
  const setup = async (argv: DirArguments, positionalDir?: string) => {
    const [{ monitorIo, defaultSessionsDir }, actions] = await Promise.all([
      import('./monitor/monitor-io.js'),
      import('./monitor/monitor-actions.js'),
    ]);
    const explicit = positionalDir ?? argv.dir;
    const { resolve } = await import('node:path');
    const directory =
      explicit === undefined || explicit === ''
        ? (monitorConsole?.directory ?? (await defaultSessionsDir(env)))
        : resolve(explicit);
    actions.requireDirectory(directory, explicit !== undefined && explicit !== '');
    return { io: monitorIo(terminal, env), directory, actions };
  };
  if (monitorConsole === undefined) {
    parser.command(
      'monitor [dir]',
      'Watch and steer running agents interactively (ps, watch, cancel, pause, resume, directive, connect)',
      (command) =>
        command.positional('dir', { type: 'string', describe: 'Sessions directory (default: $RHO_HOME/sessions)' }),
      async (argv) => {
        const { io, directory } = await setup({}, argv.dir);
        const { monitorLoop } = await import('./monitor/monitor-loop.js');
        setExit(await monitorLoop(directory, io, registerMonitorCommands));
      },
    );
  }
  const resolvePrefix = async (directory: string, prefix: string | undefined, kind?: 'cancel' | 'pause' | 'resume') => {
    if (prefix !== 'latest') return prefix;
    const { latestSessionId } = await import('./monitor/latest-session.js');
    return latestSessionId(directory, kind);
  };
  return parser
    .command(
      'ps [dir]',
      'List sessions with their live status (running, paused, waiting_approval, dead, ...)',
      (command) =>
        command
          .positional('dir', { type: 'string', describe: 'Sessions directory (default: $RHO_HOME/sessions)' })
          .option('json', { type: 'boolean', default: false, describe: 'Print the sessions as a JSON array' })
          .option('limit', {
            alias: 'n',
            type: 'number',
            describe: 'At most this many sessions, newest first (default: 50 in the table, all with --json)',
          }),
      async (argv) => {
        const { io, directory, actions } = await setup({}, argv.dir);
        const json = argv.json === true;
        const limit = typeof argv.limit === 'number' ? argv.limit : json ? undefined : 50;
        // Without a DIR, sessions of the Python rho-agent (~/.config/rho-agent/sessions) are listed too, marked.
        const withRhoAgent = argv.dir === undefined || argv.dir === '';
        setExit(
          actions.psAction(
            directory,
            {
              json,
              ...(limit === undefined ? {} : { limit }),
              ...(withRhoAgent
                ? { rhoAgentDirectory: (await import('@rho/core/internal')).rhoAgentSessionsDir() }
                : {}),
            },
            io,
          ),
        );
      },
    )
    .command(
      'watch <prefix>',
      "Show a session's events as they happen; ends when its run ends (--follow keeps watching)",
      (command) =>
        command
          .positional('prefix', {
            type: 'string',
            demandOption: true,
            describe: 'Session id, unique prefix, or latest',
          })
          .option('dir', dirOption)
          .option('json', { type: 'boolean', default: false, describe: 'Print each trace record as one JSON line' })
          .option('follow', {
            alias: 'f',
            type: 'boolean',
            default: false,
            describe: 'Keep watching after the run ends (for a later --resume)',
          })
          .option('from-start', {
            type: 'boolean',
            default: true,
            describe: 'Replay the trace from the beginning (--no-from-start: only new events)',
          }),
      async (argv) => {
        const { io, directory, actions } = await setup(argv as DirArguments);
        const prefix = String(await resolvePrefix(directory, String(argv.prefix)));
        const watch = (signal: AbortSignal) =>
          actions.watchAction(
            directory,
            prefix,
            { json: argv.json === true, follow: argv.follow === true, fromStart: argv.fromStart !== false, signal },
            io,
          );
        if (monitorConsole !== undefined) {
          setExit(await watch(monitorConsole.signal()));
          return;
        }
        const controller = new AbortController();
        const stop = () => controller.abort();
        // Ctrl+C ends the watch, never the agent: the agent is another process.
        process.on('SIGINT', stop);
        try {
          setExit(await watch(controller.signal));
        } finally {
          process.off('SIGINT', stop);
        }
      },
    )
    .command(
      ['cancel [prefix]', 'kill'],
      'Stop a running agent (alias: kill; --all: every running agent)',
      (command) => controlOptions(command, dirOption, 'cancel'),
      async (argv) => {
        const { io, directory, actions } = await setup(argv as DirArguments);
        const prefix = await resolvePrefix(
          directory,
          argv.prefix === undefined ? undefined : String(argv.prefix),
          'cancel',
        );
        setExit(
          await actions.controlAction(
            'cancel',
            directory,
            { ...(prefix === undefined ? {} : { prefix }), all: argv.all === true },
            io,
          ),
        );
      },
    )
    .command(
      'pause [prefix]',
      'Hold a running agent before its next model call or tool call',
      (command) => controlOptions(command, dirOption, 'pause'),
      async (argv) => {
        const { io, directory, actions } = await setup(argv as DirArguments);
        const prefix = await resolvePrefix(
          directory,
          argv.prefix === undefined ? undefined : String(argv.prefix),
          'pause',
        );
        setExit(
          await actions.controlAction(
            'pause',
            directory,
            { ...(prefix === undefined ? {} : { prefix }), all: argv.all === true },
            io,
          ),
        );
      },
    )
    .command(
      ['resume [prefix]', 'unpause'],
      'Release a paused agent (alias: unpause; to continue a finished session use rho --resume ID)',
      (command) => controlOptions(command, dirOption, 'resume'),
      async (argv) => {
        const { io, directory, actions } = await setup(argv as DirArguments);
        const prefix = await resolvePrefix(
          directory,
          argv.prefix === undefined ? undefined : String(argv.prefix),
          'resume',
        );
        setExit(
          await actions.controlAction(
            'resume',
            directory,
            { ...(prefix === undefined ? {} : { prefix }), all: argv.all === true },
            io,
          ),
        );
      },
    )
    .command(
      'directive <prefix> <text..>',
      'Send an instruction the agent reads before its next model call',
      (command) =>
        command
          .positional('prefix', {
            type: 'string',
            demandOption: true,
            describe: 'Session id, unique prefix, or latest',
          })
          .positional('text', { type: 'string', array: true, demandOption: true, describe: 'The instruction' })
          .option('dir', dirOption),
      async (argv) => {
        const { io, directory, actions } = await setup(argv as DirArguments);
        const text = Array.isArray(argv.text) ? argv.text.join(' ') : String(argv.text);
        setExit(
          await actions.directiveAction(
            directory,
            String(await resolvePrefix(directory, String(argv.prefix))),
            text,
            io,
          ),
        );
      },
    )
    .command(
      'connect <prefixes..>',
      'Start a coordinator agent that holds the combined context of these agents',
      (command) =>
        command
          .positional('prefixes', {
            type: 'string',
            array: true,
            demandOption: true,
            describe: 'Session ids or unique prefixes',
          })
          .option('task', { type: 'string', describe: 'What the coordinator should do with the combined context' })
          .option('dir', dirOption),
      async (argv) => {
        const { io, directory } = await setup(argv as DirArguments);
        const { connectAction } = await import('./monitor/connect-action.js');
        const prefixes = (argv.prefixes as string[]).map(String);
        const task = typeof argv.task === 'string' && argv.task.trim() !== '' ? argv.task : undefined;
        const signal = monitorConsole?.signal();
        const code = await connectAction(
          directory,
          prefixes,
          { ...(task === undefined ? {} : { task }), ...(signal === undefined ? {} : { signal }) },
          io,
        );
        if (code !== 0 && monitorConsole !== undefined) io.err(`The coordinator exited with code ${code}.\n`);
        setExit(code);
      },
    );
}

function controlOptions<T>(
  command: Argv<T>,
  dirOption: { alias: 'd'; type: 'string'; describe: string },
  verb: string,
) {
  return command
    .positional('prefix', {
      type: 'string',
      describe: `Session id or unique prefix to ${verb}, latest (the newest ${verb === 'resume' ? 'paused' : 'running'} one), or all`,
    })
    .option('all', {
      type: 'boolean',
      default: false,
      describe: `${verb[0]!.toUpperCase()}${verb.slice(1)} every ${verb === 'resume' ? 'paused' : 'running'} session`,
    })
    .option('dir', dirOption);
}
