import type { Argv } from 'yargs';
import type { Terminal } from '../terminal.js';

const SESSION = {
  type: 'string',
  demandOption: true,
  describe: 'Session id, unique id prefix, or "latest"',
} as const;

/**
 * Registers the review of what an agent changed (issue 37): `rho diff`, `rho apply`,
 * `rho discard` (an isolated session's workspace) and `rho undo` (an in-place session's
 * checkpoints). @rho/workspace is loaded only when one of them runs.
 */
export function registerWorkspaceCommands(
  parser: Argv,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
  setExit: (code: number) => void,
): Argv {
  const load = () => import('./workspace-actions.js');
  return parser
    .command(
      'diff <session>',
      'Show what an isolated session changed in its workspace (a unified diff)',
      (command) =>
        command
          .positional('session', SESSION)
          .option('stat', { type: 'boolean', default: false, describe: 'One line per changed file, and the totals' })
          .option('json', { type: 'boolean', default: false, describe: 'Print {files, stats, patch} as JSON' }),
      async (argv) => {
        const actions = await load();
        const session = await actions.findWorkspaceSession(argv.session, env);
        setExit(await actions.diffAction(session, { stat: argv.stat, json: argv.json }, actions.workspaceIo(terminal)));
      },
    )
    .command(
      'apply <session>',
      "Apply an isolated session's changes to the directory it started in (all or nothing)",
      (command) => command.positional('session', SESSION),
      async (argv) => {
        const actions = await load();
        const session = await actions.findWorkspaceSession(argv.session, env);
        setExit(await actions.applyAction(session, actions.workspaceIo(terminal)));
      },
    )
    .command(
      'discard <session>',
      "Remove an isolated session's workspace and its branch, unapplied",
      (command) =>
        command
          .positional('session', SESSION)
          .option('yes', { type: 'boolean', default: false, describe: 'Do not ask (required without a terminal)' }),
      async (argv) => {
        const actions = await load();
        const session = await actions.findWorkspaceSession(argv.session, env);
        const code = await actions.discardAction(session, { yes: argv.yes }, actions.workspaceIo(terminal));
        // Workspaces whose session is gone go too (they hold nobody's work any more).
        await actions.sweepQuietly((await import('@rho/core')).rhoHome(env));
        setExit(code);
      },
    )
    .command(
      'undo <session>',
      "Put an in-place session's files back as a checkpoint has them (shows what first)",
      (command) =>
        command
          .positional('session', SESSION)
          .option('to', {
            type: 'number',
            describe: 'The turn to go back to (default: before the last turn that changed files)',
          })
          .option('yes', { type: 'boolean', default: false, describe: 'Do not ask (required without a terminal)' }),
      async (argv) => {
        const actions = await load();
        if (argv.to !== undefined && (!Number.isInteger(argv.to) || argv.to < 0)) {
          const { UsageError } = await import('../exit-codes.js');
          throw new UsageError({ message: `--to takes a turn number, 0 or more (got ${String(argv.to)}).` });
        }
        const session = await actions.findWorkspaceSession(argv.session, env);
        const store = await actions.checkpointsOf(session);
        setExit(
          await actions.undoAction(
            store,
            { yes: argv.yes, sessionDir: session.directory, ...(argv.to === undefined ? {} : { to: argv.to }) },
            actions.workspaceIo(terminal),
          ),
        );
      },
    );
}
