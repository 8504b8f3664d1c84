// What every monitor command does first: find the sessions directory and the fleet, and route the
// command to the one that has the session. Loaded with the command registrations (main.ts), so it
// imports nothing but types: the monitor, the fleet and the actions are loaded when a command runs.
import type { Terminal } from '../../terminal.js';

/** The options every monitor command takes: `--dir` (or a DIR positional) and the global `--fleet`. */
export interface DirArguments {
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
export interface Routes {
  /** The command, on a `SessionSource` of `@rho/monitor` (the fleet's, or the directory's). */
  run: (source: import('@rho/monitor').SessionSource) => Promise<number>;
  /** The session prefix the command names, to look for locally when the fleet does not know it. */
  prefix?: string;
}

/** `--dir`, for the commands that take a session (the listing takes a DIR positional instead). */
export const DIR_OPTION = {
  alias: 'd',
  type: 'string',
  describe: 'Sessions directory (default: $RHO_HOME/sessions)',
} as const;

/**
 * The set-up of a monitor command's handler: its I/O, its sessions directory (DIR, `--dir`, the
 * monitor console's, else `$RHO_HOME/sessions`), the actions, and `route`, which runs the command
 * on the fleet or on this machine's directory. DIR must be a directory when it is given.
 */
export function monitorSetup(terminal: Terminal, env: NodeJS.ProcessEnv, monitorConsole?: MonitorConsole) {
  return async (argv: DirArguments, positionalDir?: string) => {
    const [{ monitorIo, defaultSessionsDir }, actions, { createDirectorySource }] = await Promise.all([
      import('./monitor-io.js'),
      import('./monitor-actions.js'),
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
      const { withOperatorFleet } = await import('../../fleet/operator-fleet.js');
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
}

/** The set-up a handler gets ({@link monitorSetup}). */
export type MonitorSetup = ReturnType<typeof monitorSetup>;

/** `latest` as the id of the session it names on `source` (for a control `kind`: the newest one it applies to). */
export async function resolvePrefix(
  source: import('@rho/monitor').SessionSource,
  prefix: string | undefined,
  kind?: 'cancel' | 'pause' | 'resume',
): Promise<string | undefined> {
  if (prefix !== 'latest') return prefix;
  const { latestSessionId } = await import('./monitor-actions.js');
  return latestSessionId(source, kind);
}
