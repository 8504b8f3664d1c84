// `rho approve`, `rho deny`: a tool call that waits for approval, answered over the fleet or this
// machine. Loaded with the command registrations: the handlers load what they use when they run.
import type { Argv } from 'yargs';
import type { DirArguments, MonitorSetup } from './command-setup.js';
import { DIR_OPTION, resolvePrefix } from './command-setup.js';

/** Registers `approve <prefix> [call]` and `deny <prefix> [call]` on `parser`. */
export function registerApprovalCommands(parser: Argv, setup: MonitorSetup, setExit: (code: number) => void): Argv {
  return parser
    .command(
      'approve <prefix> [call]',
      'Approve a tool call that waits for approval (the only one, or CALL)',
      (command) => approvalOptions(command, 'approve'),
      (argv) => answer(setup, setExit, 'approve', argv),
    )
    .command(
      'deny <prefix> [call]',
      'Deny a tool call that waits for approval; the model reads --reason',
      (command) => approvalOptions(command, 'deny'),
      (argv) => answer(setup, setExit, 'deny', argv),
    );
}

/** `approve` and `deny`: one waiting call of one session, over the fleet or this machine. */
async function answer(
  setup: MonitorSetup,
  setExit: (code: number) => void,
  decision: 'approve' | 'deny',
  argv: Record<string, unknown>,
): Promise<void> {
  const { io, route } = await setup(argv as DirArguments);
  const { approvalAction } = await import('./approval-actions.js');
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
}

function approvalOptions<T>(command: Argv<T>, verb: 'approve' | 'deny') {
  const base = command
    .positional('prefix', { type: 'string', demandOption: true, describe: 'Session id, unique prefix, or latest' })
    .positional('call', { type: 'string', describe: 'The waiting tool call (needed when several wait)' })
    .option('dir', DIR_OPTION);
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
