import type { Argv } from 'yargs';
import type { Terminal } from '../terminal.js';
import type { DirArguments, MonitorConsole } from './monitor/command-setup.js';
import { DIR_OPTION, monitorSetup, resolvePrefix } from './monitor/command-setup.js';
import { registerApprovalCommands } from './monitor/approval-commands.js';

export type { MonitorConsole } from './monitor/command-setup.js';

/**
 * Registers the monitor subcommands: `monitor`, `ps`, `watch`, `cancel` (alias `kill`), `pause`,
 * `resume` (alias `unpause`), `directive`, `approvals`, `approve`, `deny`, `connect`. The handlers load `@rho/monitor` only when
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
  const dirOption = DIR_OPTION;
  const setup = monitorSetup(terminal, env, monitorConsole);
  if (monitorConsole === undefined) {
    parser.command(
      'monitor [dir]',
      'Watch and steer running agents interactively (ps, watch, cancel, pause, resume, directive, approvals, connect)',
      (command) =>
        command.positional('dir', { type: 'string', describe: 'Sessions directory (default: $RHO_HOME/sessions)' }),
      async (argv) => {
        const { io, directory } = await setup({}, argv.dir);
        const { monitorLoop } = await import('./monitor/monitor-loop.js');
        // A named directory is watched as such; otherwise the configured fleet, if any.
        const explicit = argv.dir !== undefined && argv.dir !== '';
        const { operatorFleetConfig } = await import('../fleet/operator-fleet.js');
        const fleet = explicit ? undefined : await operatorFleetConfig(argv.fleet as string | undefined, env);
        setExit(await monitorLoop(directory, io, registerMonitorCommands, process.stdin, fleet?.url ?? ''));
      },
    );
  }
  /** Control commands share their handler: prefix or --all, over the fleet or this machine. */
  const control = (kind: 'cancel' | 'pause' | 'resume') => async (argv: Record<string, unknown>) => {
    const { io, actions, route } = await setup(argv as DirArguments);
    const given = argv.prefix === undefined ? undefined : String(argv.prefix);
    const all = argv.all === true;
    const routed = route({
      ...(given === undefined || given === 'latest' ? {} : { prefix: given }),
      run: async (source) => {
        const prefix = await resolvePrefix(source, given, kind);
        return actions.controlAction(kind, source, { ...(prefix === undefined ? {} : { prefix }), all }, io);
      },
    });
    try {
      setExit(await routed);
    } catch (error) {
      // `rho cancel TASK-ID`: an id that names no session (in the fleet or here) may name a task
      // of the queue, which lives in the fleet's database.
      const { SessionNotFoundError } = await import('@rho/core');
      if (kind !== 'cancel' || given === undefined || given === 'latest' || all) throw error;
      // A fleet whose schema was never migrated (a queue-only set-up) has no sessions to match either.
      const noFleetSchema = (error as { code?: unknown } | null)?.code === 'fleet_schema_outdated';
      if (!noFleetSchema && (!SessionNotFoundError.isInstance(error) || error.candidates.length > 0)) throw error;
      if (typeof argv.dir === 'string' && argv.dir !== '') throw error;
      const { cancelTaskInstead } = await import('./queue-actions.js');
      const code = await cancelTaskInstead(given, argv as { fleet?: string }, env, (text) => io.out(text));
      if (code === undefined) throw error;
      if (code === 'none')
        throw new SessionNotFoundError({
          message: `No session or task with id '${given}'. List them with: rho ps (sessions), rho tasks (queued tasks).${noFleetSchema ? " The fleet's schema was never migrated (rho fleet migrate), so it holds no session yet." : ''}`,
        });
      setExit(code);
    }
  };
  parser
    .command(
      'ps [dir]',
      "List sessions with their live status (running, paused, waiting_approval, dead, ...); with a fleet, every node's",
      (command) =>
        command
          .positional('dir', { type: 'string', describe: 'Sessions directory (default: $RHO_HOME/sessions)' })
          .option('json', { type: 'boolean', default: false, describe: 'Print the sessions as a JSON array' })
          .option('limit', {
            alias: 'n',
            type: 'number',
            describe: 'At most this many sessions, newest first (default: 50 in the table, all with --json)',
          })
          .option('host', { type: 'string', requiresArg: true, describe: 'Fleet: only sessions of this host (node)' })
          .option('label', {
            type: 'string',
            requiresArg: true,
            describe: 'Fleet: only sessions with this label (key or key=value)',
          })
          .option('status', {
            type: 'string',
            requiresArg: true,
            describe: 'Fleet: only sessions with this status (running, paused, dead, completed, ...; comma-separated)',
          }),
      async (argv) => {
        const { io, actions, route, createDirectorySource, here } = await setup(
          { fleet: argv.fleet } as DirArguments,
          argv.dir,
        );
        const json = argv.json === true;
        const limit = typeof argv.limit === 'number' ? argv.limit : json ? undefined : 50;
        const filters = {
          ...(typeof argv.host === 'string' ? { host: argv.host } : {}),
          ...(typeof argv.label === 'string' ? { label: argv.label } : {}),
          ...(argv.status === undefined ? {} : { status: ([] as string[]).concat(argv.status as string | string[]) }),
        };
        // Without a DIR, sessions of the Python rho-agent (~/.config/rho-agent/sessions) are listed too, marked.
        const withRhoAgent = argv.dir === undefined || argv.dir === '';
        setExit(
          await route({
            run: async (source) =>
              actions.psAction(
                source,
                {
                  json,
                  ...(limit === undefined ? {} : { limit }),
                  ...filters,
                  ...(withRhoAgent && source.kind === 'directory'
                    ? { rhoAgent: createDirectorySource((await import('@rho/core/internal')).rhoAgentSessionsDir()) }
                    : {}),
                  // With a fleet, this machine's sessions that never registered with it follow, marked.
                  ...(source.kind === 'fleet' ? { local: here } : {}),
                },
                io,
              ),
          }),
        );
      },
    )
    .command(
      'watch <prefix>',
      "Show a session's events as they happen (any node's, with a fleet); ends when its run ends (--follow keeps watching)",
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
        const { io, actions, route } = await setup(argv as DirArguments);
        const given = String(argv.prefix);
        const options = { json: argv.json === true, follow: argv.follow === true, fromStart: argv.fromStart !== false };
        const watch = (signal: AbortSignal) =>
          route({
            ...(given === 'latest' ? {} : { prefix: given }),
            run: async (source) =>
              actions.watchAction(source, String(await resolvePrefix(source, given)), { ...options, signal }, io),
          });
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
      control('cancel'),
    )
    .command(
      'pause [prefix]',
      'Hold a running agent before its next model call or tool call',
      (command) => controlOptions(command, dirOption, 'pause'),
      control('pause'),
    )
    .command(
      ['resume [prefix]', 'unpause'],
      'Release a paused agent (alias: unpause; to continue a finished session use rho --resume ID)',
      (command) => controlOptions(command, dirOption, 'resume'),
      control('resume'),
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
        const { io, actions, route } = await setup(argv as DirArguments);
        const text = Array.isArray(argv.text) ? argv.text.join(' ') : String(argv.text);
        const given = String(argv.prefix);
        setExit(
          await route({
            ...(given === 'latest' ? {} : { prefix: given }),
            run: async (source) =>
              actions.directiveAction(source, String(await resolvePrefix(source, given)), text, io),
          }),
        );
      },
    );
  registerApprovalCommands(parser, setup, setExit);
  return parser.command(
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
      const { io, directory, route } = await setup(argv as DirArguments);
      const { connectAction } = await import('./monitor/connect-action.js');
      const prefixes = (argv.prefixes as string[]).map(String);
      const task = typeof argv.task === 'string' && argv.task.trim() !== '' ? argv.task : undefined;
      const signal = monitorConsole?.signal();
      const options = { ...(task === undefined ? {} : { task }), ...(signal === undefined ? {} : { signal }) };
      const code = await route({
        run: async (source) => {
          if (source.kind === 'directory') return connectAction(directory, prefixes, options, io);
          // Sessions here are read from their directories; the others are copied from the fleet's mirror.
          const [{ mkdtempSync, rmSync }, { tmpdir }, { join }, { SessionStore }, { copySession }] = await Promise.all([
            import('node:fs'),
            import('node:os'),
            import('node:path'),
            import('@rho/core'),
            import('@rho/monitor'),
          ]);
          const copies = mkdtempSync(join(tmpdir(), 'rho-connect-'));
          try {
            return await connectAction(directory, prefixes, options, io, async (prefix) => {
              try {
                return new SessionStore(directory).lookup(prefix);
              } catch {
                return copySession(source, await source.resolve(prefix), copies);
              }
            });
          } finally {
            rmSync(copies, { recursive: true, force: true });
          }
        },
      });
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
