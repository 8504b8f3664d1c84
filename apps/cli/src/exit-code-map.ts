// Free of imports, so `rho --help` can list the codes without loading the agent runtime;
// exit-codes.ts re-exports these and maps run outcomes and errors onto them.

/**
 * The exit codes of `rho` (DESIGN.md), the only place they are defined: every command returns
 * one of these, and `main` maps errors that escape a command through {@link describeFailure}.
 */
export const EXIT = {
  /** The run completed; a command did what it was asked; `policy check`: allowed. */
  completed: 0,
  /** The run failed (model API, tool, internal); `policy check`: refused. */
  failed: 1,
  /** Every tool call of the run was refused (no approval, or the profile): the task was not done. */
  refused: 1,
  /** Bad input or configuration, with a message that says what to fix. */
  badInput: 2,
  /** A budget or turn limit ended the run. */
  limit: 3,
  /** The run stopped while a tool call waited for approval: answer it (rho approve/deny) and resume. */
  waitingApproval: 4,
  /** Cancelled (Ctrl+C, SIGTERM, `rho cancel`). */
  cancelled: 130,
} as const;

/** One exit code of {@link EXIT}. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** The exit codes with what they mean, for `rho --help`. */
export const EXIT_CODE_HELP: readonly (readonly [number, string])[] = [
  [EXIT.completed, 'completed'],
  [EXIT.failed, 'the run failed (model API, tool, internal), or every tool call was refused'],
  [
    EXIT.badInput,
    'bad input or configuration (the message says what to fix); a signal for a fleet session that is not live',
  ],
  [EXIT.limit, 'a budget or turn limit ended the run'],
  [EXIT.waitingApproval, 'the run stopped while a tool call waited for approval (answer it, then rho --resume ID)'],
  [EXIT.cancelled, 'cancelled'],
];
