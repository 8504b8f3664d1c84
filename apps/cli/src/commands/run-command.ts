import { closeSync, existsSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Session, SessionEvent } from '@rho/core';
import { SessionWriteError } from '@rho/core';
import { exitCodeForStatus, UsageError } from '../exit-codes.js';
import { createHumanRenderer, createJsonRenderer } from '../render.js';
import type { SetupArguments } from '../run-setup.js';
import { prepareRun } from '../run-setup.js';
import type { Terminal } from '../terminal.js';

/** Parsed arguments of the run command. */
export interface RunArguments extends SetupArguments {
  output?: string;
  json: boolean;
  list: boolean;
}

/** `rho [PROMPT]`: runs one task (or opens the REPL) and returns the exit code. */
export async function runCommand(argv: RunArguments, terminal: Terminal, env: NodeJS.ProcessEnv): Promise<number> {
  if (argv.list) {
    const { listSessionsCommand } = await import('./list-command.js');
    return listSessionsCommand({ json: argv.json }, terminal, env);
  }
  if (argv.output !== undefined && existsSync(resolve(argv.output))) {
    throw new UsageError({ message: `Output file already exists: ${resolve(argv.output)}. Choose another path or remove it first; rho never overwrites it.` });
  }
  const interactive = process.stdin.isTTY === true && process.stdout.isTTY === true;
  const hasPrompt = [argv.p, ...(Array.isArray(argv.prompt) ? argv.prompt : [argv.prompt])].some((item) => typeof item === 'string' && item.trim() !== '');
  if (!hasPrompt && !interactive && argv.systemPrompt === undefined && argv.config === undefined) {
    throw new UsageError({ message: 'Non-interactive terminal detected. Provide a prompt argument (rho "task" or -p "task"), or run in a terminal for interactive mode.' });
  }
  const onWarning = argv.json ? undefined : (message: string) => terminal.stderr.write(`Warning: ${message}\n`);
  const setup = await prepareRun(argv, env, onWarning === undefined ? {} : { onWarning });
  if (setup.prompt === undefined) {
    if (!interactive) {
      throw new UsageError({ message: 'Non-interactive terminal detected. Provide a prompt argument (rho "task" or -p "task"), or run in a terminal for interactive mode.' });
    }
    const { runRepl } = await import('../repl.js');
    return runRepl(setup, terminal, {
      autoApprove: argv.autoApprove || setup.config.autoApprove === true,
      resume: (reference) => prepareRun({ ...argv, resume: reference, prompt: undefined, p: undefined }, env, onWarning === undefined ? {} : { onWarning }),
    });
  }
  const { session } = setup;
  if (!argv.autoApprove && interactive) {
    const { createTerminalApprover } = await import('../approval-prompt.js');
    session.approver = createTerminalApprover(terminal);
  } else if (argv.autoApprove || setup.config.autoApprove === true) {
    session.approver = () => true;
  }
  const render: (event: SessionEvent) => void = argv.json ? createJsonRenderer(terminal) : createHumanRenderer(terminal, { spinner: interactive });
  if (!argv.json && setup.resumed) {
    terminal.stderr.write(`Resuming session: ${session.id}\n`);
    for (const note of replayNotes(session)) terminal.stderr.write(`${note}\n`);
  }
  let interrupts = 0;
  const onInterrupt = () => {
    interrupts += 1;
    if (interrupts === 1) {
      if (!argv.json) terminal.stderr.write('\nCancelling... (Ctrl+C again to quit at once)\n');
      session.cancel();
    } else {
      process.exit(130);
    }
  };
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onInterrupt);
  let result;
  try {
    result = await session.run(setup.prompt, { onEvent: render });
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onInterrupt);
    await setup.close().catch(() => {});
  }
  // A trace that cannot be written leaves no error record (and so no rendered event): say it here.
  if (result.status === 'error' && result.error !== undefined && SessionWriteError.isInstance(result.error)) terminal.stderr.write(`rho: ${result.error.message}\n`);
  if (!argv.json) terminal.stderr.write(`Session: ${session.id} (resume with: rho --resume ${session.id})\n`);
  if (argv.output !== undefined && result.status === 'completed') {
    writeNewFile(resolve(argv.output), result.text.endsWith('\n') ? result.text : `${result.text}\n`);
    if (!argv.json) terminal.stderr.write(`Output written to: ${resolve(argv.output)}\n`);
  } else if (argv.output !== undefined && result.status === 'truncated') {
    // A cut-off answer written to a file would pass for a whole one: it is not written.
    terminal.stderr.write(`rho: ${resolve(argv.output)} was not written: the answer is incomplete (cut off at the model's output limit).\n`);
  }
  return exitCodeForStatus(result.status);
}

/** What a person should know about a resumed trace: interrupted tool calls, a torn last line. */
export function replayNotes(session: Session): string[] {
  const report = session.state.replay;
  if (report === undefined) return [];
  const notes = report.interruptedToolCalls.map((call) => `Note: tool call ${call.name} (${call.id}) was interrupted when the agent stopped; the model is told its outcome is unknown.`);
  if (report.tornLastLine) notes.push('Note: the last line of the trace was cut off by a crash and was ignored.');
  for (const record of report.invalidRecords.slice(0, 5)) notes.push(`Note: trace line ${record.line} (a ${record.type} record) was skipped: ${record.reason}.`);
  if (report.invalidRecords.length > 5) notes.push(`Note: ${report.invalidRecords.length - 5} more trace records of the wrong shape were skipped.`);
  if (report.recoveredDirectives > 0) notes.push(`Note: ${report.recoveredDirectives} operator directive(s) recorded just before the agent stopped are delivered from their trace record.`);
  if (report.skippedLines.length > 0) notes.push(`Note: ${report.skippedLines.length} unreadable trace line(s) were skipped (lines ${report.skippedLines.slice(0, 5).join(', ')}${report.skippedLines.length > 5 ? ', ...' : ''}).`);
  return notes;
}

function writeNewFile(path: string, content: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, 'wx');
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
}
