import type { Argv } from 'yargs';
import type { Terminal } from '../terminal.js';

interface DirArguments {
  dir?: string;
  /** `--fleet URL` (global). */
  fleet?: string;
}

/** The monitor console (`rho monitor`) running these commands: its directory, and what stops a command. */
export interface MonitorConsole {
  /** The sessions directory the console was opened on (the default for every command). */
  directory: string;
  /** Aborted by Ctrl+C in the console: stops a watch or a coordinator, never an agent. */
  signal: () => AbortSignal;
  /** `rho monitor --fleet URL`: the fleet the console's commands work on. */
  fleet?: string;
}

/** What a command does, on the sessions of a fleet or of this machine's sessions directory. */
interface Routes {
  /** The command, on a `SessionSource` of `@rho/monitor` (the fleet's, or the directory's). */
  run: (source: import('@rho/monitor').SessionSource) => Promise<number>;
  /** The session prefix the command names, to look for locally when the fleet does not know it. */
  prefix?: string;
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
    const [{ monitorIo, defaultSessionsDir }, actions, { createDirectorySource }] = await Promise.all([
      import('./monitor/monitor-io.js'),
      import('./monitor/monitor-actions.js'),
      import('@rho/monitor'),
    ]);
    const explicit = positionalDir ?? argv.dir;
    const { resolve } = await import('node:path');
    const directory =
      explicit === undefined || explicit === ''
        ? (monitorConsole?.directory ?? (await defaultSessionsDir(env)))
        : resolve(explicit);
    const local = explicit !== undefined && explicit !== '';
    actions.requireDirectory(directory, local);
    const io = monitorIo(terminal, env);
    const flag = (argv as { fleet?: string }).fleet ?? monitorConsole?.fleet;
    const here = createDirectorySource(directory);
    /**
     * Runs a command over the fleet when one is configured and no directory was named, else on
     * the directory. A session the fleet does not know but this machine has (it ran without a
     * fleet) is still found here; a fleet whose database does not answer leaves this machine's
     * sessions, with a warning.
     */
    const route = async (routes: Routes): Promise<number> => {
      if (local) return routes.run(here);
      const { withOperatorFleet } = await import('../fleet/operator-fleet.js');
      return withOperatorFleet(
        flag,
        env,
        async (fleet) => {
          try {
            return await routes.run(fleet);
          } catch (error) {
            const { SessionNotFoundError } = await import('@rho/core');
            if (!SessionNotFoundError.isInstance(error) || routes.prefix === undefined) throw error;
            try {
              await here.resolve(routes.prefix);
            } catch {
              throw error;
            }
            return routes.run(here);
          }
        },
        () => routes.run(here),
        async (reason) => {
          // A listing shows this machine's sessions; a command for one session tries it here, and
          // when it is not here says that the fleet, which might know it, did not answer.
          if (routes.prefix === undefined) {
            io.err(`Warning: fleet: ${reason} Showing this machine's sessions only.\n`);
            return routes.run(here);
          }
          io.err(`Warning: fleet: ${reason} Looking for ${routes.prefix} on this machine only.\n`);
          try {
            return await routes.run(here);
          } catch (error) {
            const { SessionNotFoundError } = await import('@rho/core');
            if (!SessionNotFoundError.isInstance(error)) throw error;
            const { FleetUnavailableError } = await import('@rho/fleet');
            throw new FleetUnavailableError({
              message: `Session ${routes.prefix} is not on this machine, and the fleet's database, which may know it, does not answer: nothing was sent. Try again once the fleet answers (rho fleet status).`,
              cause: error,
            });
          }
        },
      );
    };
    return { io, directory, here, actions, route, createDirectorySource };
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
        // A named directory is watched as such; otherwise the configured fleet, if any.
        const explicit = argv.dir !== undefined && argv.dir !== '';
        const { operatorFleetConfig } = await import('../fleet/operator-fleet.js');
        const fleet = explicit ? undefined : await operatorFleetConfig(argv.fleet as string | undefined, env);
        setExit(await monitorLoop(directory, io, registerMonitorCommands, process.stdin, fleet?.url ?? ''));
      },
    );
  }
  /** `latest` as the id of the session it names on `source` (for a control `kind`: the newest one it applies to). */
  const resolvePrefix = async (
    source: import('@rho/monitor').SessionSource,
    prefix: string | undefined,
    kind?: 'cancel' | 'pause' | 'resume',
  ): Promise<string | undefined> => {
    if (prefix !== 'latest') return prefix;
    const { latestSessionId } = await import('./monitor/monitor-actions.js');
    return latestSessionId(source, kind);
  };
  /** `approve` and `deny`: one waiting call of one session, over the fleet or this machine. */
  const answer = async (decision: 'approve' | 'deny', argv: Record<string, unknown>) => {
    const { io, route } = await setup(argv as DirArguments);
    const { approvalAction } = await import('./monitor/approval-actions.js');
    const given = String(argv.prefix);
    const scope: 'call' | 'tool' | undefined =
      argv.alwaysThisCall === true ? 'call' : argv.alwaysTool === true ? 'tool' : undefined;
    const command = {
      decision,
      ...(argv.call === undefined ? {} : { call: String(argv.call) }),
      ...(scope === undefined ? {} : { scope }),
      ...(typeof argv.reason === 'string' ? { reason: argv.reason } : {}),
    } as const;
    setExit(
      await route({
        ...(given === 'latest' ? {} : { prefix: given }),
        run: async (source) => approvalAction(source, String(await resolvePrefix(source, given)), command, io),
      }),
    );
  };
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
  return parser
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
        const { io, actions, route, createDirectorySource } = await setup(
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
    )
    .command(
      'approve <prefix> [call]',
      'Approve a tool call that waits for approval (the only one, or CALL)',
      (command) => approvalOptions(command, dirOption, 'approve'),
      (argv) => answer('approve', argv),
    )
    .command(
      'deny <prefix> [call]',
      'Deny a tool call that waits for approval; the model reads --reason',
      (command) => approvalOptions(command, dirOption, 'deny'),
      (argv) => answer('deny', argv),
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
            const [{ mkdtempSync, rmSync }, { tmpdir }, { join }, { SessionStore }, { copySession }] =
              await Promise.all([
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

function approvalOptions<T>(
  command: Argv<T>,
  dirOption: { alias: 'd'; type: 'string'; describe: string },
  verb: 'approve' | 'deny',
) {
  const base = command
    .positional('prefix', { type: 'string', demandOption: true, describe: 'Session id, unique prefix, or latest' })
    .positional('call', { type: 'string', describe: 'The waiting tool call (needed when several wait)' })
    .option('dir', dirOption);
  return verb === 'deny'
    ? base.option('reason', { type: 'string', describe: 'Why (the model reads it)' })
    : base
        .option('always-this-call', {
          type: 'boolean',
          describe: 'Also approve this exact call (same tool and arguments) for the rest of the session',
        })
        .option('always-tool', {
          type: 'boolean',
          describe: 'Also approve every later call of this tool that matches no dangerous pattern',
        })
        .conflicts('always-this-call', 'always-tool');
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
