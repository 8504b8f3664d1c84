// `rho approvals`, `rho approve`, `rho deny`: the tool calls that wait for approval, listed and
// answered, over the fleet or this machine. Loaded with the command registrations: the handlers
// load what they use when they run.
import type { Argv } from 'yargs';
import type { DirArguments, MonitorSetup } from './command-setup.js';
import { DIR_OPTION, resolvePrefix } from './command-setup.js';

/** Registers `approvals [dir]`, `approve <prefix> [call]` and `deny <prefix> [call]` on `parser`. */
export function registerApprovalCommands(parser: Argv, setup: MonitorSetup, setExit: (code: number) => void): Argv {
  return parser
    .command(
      'approvals [dir]',
      'List the tool calls that wait for approval (any node, with a fleet), with the rho approve / rho deny that answers each',
      (command) =>
        command
          .positional('dir', { type: 'string', describe: 'Sessions directory (default: $RHO_HOME/sessions)' })
          .option('json', { type: 'boolean', default: false, describe: 'Print the waiting calls as a JSON array' }),
      async (argv) => {
        const { io, route } = await setup({ fleet: argv.fleet } as DirArguments, argv.dir);
        const { approvalsAction } = await import('./approvals-action.js');
        setExit(await route({ run: (source) => approvalsAction(source, { json: argv.json === true }, io) }));
      },
    )
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

/**
 * `approve` and `deny`: one waiting call of one session, over the fleet or this machine. The fleet
 * takes answers for live sessions only; a session it refuses (no process runs it: parked) that is
 * on this machine is answered in its directory, where its resumed run reads the answer.
 */
async function answer(
  setup: MonitorSetup,
  setExit: (code: number) => void,
  decision: 'approve' | 'deny',
  argv: Record<string, unknown>,
): Promise<void> {
  const { io, route, here } = await setup(argv as DirArguments);
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
      run: async (source) => {
        const prefix = String(await resolvePrefix(source, given));
        try {
          return await approvalAction(source, prefix, command, io);
        } catch (error) {
          if (source.kind !== 'fleet' || !isRefusedAnswer(error)) throw error;
          const local = await here.resolve(error.sessionId).catch(() => undefined);
          if (local?.status !== 'parked') throw error;
          io.err(
            `The fleet takes answers for live sessions only, and no process runs ${local.id} (parked); answering it in this machine's session directory.\n`,
          );
          return approvalAction(here, local.id, command, io);
        }
      },
    }),
  );
}

/** The fleet's refusal of an answer for a session that is not live (`FleetSignalRefusedError` of an approval). */
function isRefusedAnswer(error: unknown): error is { sessionId: string } {
  const refused = error as { code?: unknown; signal?: unknown; sessionId?: unknown } | null;
  return (
    refused?.code === 'fleet_signal_refused' && refused.signal === 'approval' && typeof refused.sessionId === 'string'
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
