import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { ApprovalRequestedEvent, SessionEvent } from '@rho/core';
import { ConfigError, SessionWriteError } from '@rho/core';
import { EXIT, exitCodeForStatus, UsageError } from '../exit-codes.js';
import { exitAfterClosing } from '../exit-cleanup.js';
import { loadMarkdownRenderer } from '../markdown.js';
import { writeNewFileWhole } from '../output-file.js';
import { createEventRenderer, createJsonRenderer } from '../render.js';
import { toolSignature } from '../format.js';
import { promptToSend, replayNotes } from '../replay-notes.js';
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
    throw new UsageError({
      message: `Output file already exists: ${resolve(argv.output)}. Choose another path or remove it first; rho never overwrites it.`,
    });
  }
  const interactive = process.stdin.isTTY === true && process.stdout.isTTY === true;
  const hasPrompt = [argv.p, ...(Array.isArray(argv.prompt) ? argv.prompt : [argv.prompt])].some(
    (item) => typeof item === 'string' && item.trim() !== '',
  );
  // A resumed session may go on without a prompt (it was parked at a waiting call): decided below.
  if (
    !hasPrompt &&
    !interactive &&
    argv.systemPrompt === undefined &&
    argv.config === undefined &&
    argv.resume === undefined
  ) {
    throw new UsageError({
      message:
        'Non-interactive terminal detected. Provide a prompt argument (rho "task" or -p "task"), or run in a terminal for interactive mode.',
    });
  }
  // The renderer gathers its output per turn of the event loop: what is written to the terminal
  // directly during a run goes after what it has gathered (flushOutput is the renderer's flush
  // once there is one).
  let flushOutput = (): void => {};
  // With --json a warning is a JSON line too (`{"type":"warning",...}`), on stderr: stdout carries
  // only the session's records, each of which is in its trace.
  const onWarning = argv.json
    ? (message: string) => {
        terminal.stderr.write(`${JSON.stringify({ type: 'warning', ts: new Date().toISOString(), message })}\n`);
      }
    : (message: string) => {
        flushOutput();
        terminal.stderr.write(`Warning: ${message}\n`);
      };
  // The Markdown renderer loads while the session is set up (only when the answer is rendered).
  const markdown =
    !argv.json && terminal.stdout.isTTY === true && env.RHO_MARKDOWN !== '0'
      ? loadMarkdownRenderer({ width: terminalWidth(terminal), color: terminal.color && env.TERM !== 'dumb' })
      : undefined;
  // What the run is about to do (where an isolated run works): a line of its own, on stderr.
  const onNotice = argv.json
    ? (message: string) => {
        terminal.stderr.write(`${JSON.stringify({ type: 'notice', ts: new Date().toISOString(), message })}\n`);
      }
    : (message: string) => {
        flushOutput();
        terminal.stderr.write(`${message}\n`);
      };
  const setup = await prepareRun(argv, env, { onWarning, onNotice });
  // A resumed session parked at a call that waits for approval goes on at that call, with no new prompt.
  const continuing = setup.prompt === undefined && setup.resumed && setup.session.state.parkedToolCalls.length > 0;
  if (setup.prompt === undefined && !continuing) {
    if (!interactive) {
      throw new UsageError({
        message:
          'Non-interactive terminal detected. Provide a prompt argument (rho "task" or -p "task"), or run in a terminal for interactive mode.',
      });
    }
    const { runRepl } = await import('../repl.js');
    return runRepl(setup, terminal, {
      autoApprove: setup.settings.approvals.autoApprove,
      ...((await markdown?.then(
        (render) => ({ markdown: render }),
        () => ({}),
      )) ?? {}),
      resume: (reference) =>
        prepareRun({ ...argv, resume: reference, prompt: undefined, p: undefined }, env, { onWarning, onNotice }),
    });
  }
  const { session } = setup;
  // Approvals and the status line need a person at a terminal (stdin and stderr); the answer may
  // still be piped (`rho "task" | tee answer.md`).
  const canAsk = process.stdin.isTTY === true && terminal.stderr.isTTY === true;
  const rendered = await markdown?.catch(() => undefined);
  const autoApprove = setup.settings.approvals.autoApprove;
  const renderer = argv.json
    ? undefined
    : createEventRenderer({
        mode: 'live',
        gatherPerTick: true,
        color: terminal.color,
        out: (text) => terminal.stdout.write(text),
        err: (text) => terminal.stderr.write(text),
        statusLine: canAsk,
        ...(rendered === undefined ? {} : { markdown: rendered }),
        workingDir: setup.workingDir,
        contextWindow: () => session.contextWindow,
        width: terminalWidth(terminal),
      });
  if (renderer !== undefined) flushOutput = renderer.flush;
  if (autoApprove) {
    session.approver = () => true;
  } else if (canAsk) {
    const { createTerminalApprover } = await import('../approval-prompt.js');
    session.approver = createTerminalApprover(terminal, {
      workingDir: setup.workingDir,
      ...(renderer === undefined ? {} : { beforeAsk: renderer.pauseStatus }),
    });
  } else {
    // Nobody can approve: say so before the first model call, naming the tools it concerns (the
    // toolset did not offer them) and what to do.
    const needing = setup.withheld.map((tool) => tool.name);
    if (needing.length > 0) {
      const list = needing.length === 1 ? needing[0] : `${needing.slice(0, -1).join(', ')} and ${needing.at(-1)}`;
      const notice = `Note: no terminal to approve on, so ${list} ${needing.length === 1 ? 'is' : 'are'} not offered: every call of ${needing.length === 1 ? 'it' : 'them'} needs approval under profile ${setup.profile.name}. Pass -y to approve ${needing.length === 1 ? 'it' : 'them'}, or --profile to choose another profile.`;
      // On stderr also with --json: stdout carries only the session's events.
      terminal.stderr.write(`${notice}\n`);
    }
  }
  const json = argv.json
    ? createJsonRenderer((text) => terminal.stdout.write(text), {
        sessionId: session.id,
        workingDir: setup.workingDir,
      })
    : undefined;
  let blocked: string[] = [];
  let modelAnswers = 0;
  const render = (event: SessionEvent) => {
    if (event.type === 'tool_blocked') blocked.push(`${event.tool_name}: ${event.reason}`);
    // A call waits for an answer from elsewhere: say which, and how to answer (on stderr, also with --json).
    if (event.type === 'approval_requested') {
      flushOutput();
      terminal.stderr.write(`${waitingNotice(session.id, event)}\n`);
    }
    if (event.type === 'llm_end') modelAnswers += 1;
    if (json !== undefined) json(event);
    else renderer?.(event);
  };
  if (!argv.json && setup.resumed) {
    terminal.stderr.write(`Resuming session: ${session.id}\n`);
    for (const note of replayNotes(session)) terminal.stderr.write(`${note}\n`);
  } else if (setup.resumed) {
    // With --json the notes (skipped or torn lines, interrupted calls) are warnings too.
    for (const note of replayNotes(session)) onWarning(note.replace(/^Note: /, ''));
  }
  let interrupts = 0;
  const onInterrupt = () => {
    interrupts += 1;
    if (interrupts === 1) {
      flushOutput();
      if (!argv.json) terminal.stderr.write('\nCancelling... (Ctrl+C again to quit at once)\n');
      session.cancel();
    } else {
      // Quit at once, but not before the backend's container or remote sandbox is released.
      flushOutput();
      exitAfterClosing(EXIT.cancelled);
    }
  };
  // SIGTERM while a call waits for approval parks the run (it ends waiting_approval, and a resume
  // goes on at that call); otherwise it cancels, as Ctrl+C does.
  const stop = new AbortController();
  const onTerminate = () => {
    if (session.pendingApprovals().length > 0 && interrupts === 0) {
      interrupts += 1;
      flushOutput();
      stop.abort();
    } else onInterrupt();
  };
  process.on('SIGINT', onInterrupt);
  process.on('SIGTERM', onTerminate);
  let result;
  let changes: string | undefined;
  try {
    result = await session.run(setup.prompt === undefined ? '' : promptToSend(session, setup.prompt), {
      onEvent: render,
      signal: stop.signal,
      ...(setup.settings.queue.task === undefined ? {} : { task: setup.settings.queue.task }),
    });
    // The last turn's checkpoint; what an isolated run changed, in meta.json and said below.
    changes = await setup.workspace?.afterRun(session.id).catch((error: unknown) => {
      onWarning(`what the run changed could not be read: ${(error as Error).message}`);
      return undefined;
    });
  } finally {
    renderer?.finish();
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onTerminate);
    await setup.close().catch(() => {});
  }
  // A trace that cannot be written leaves no error record (and so no rendered event): say it here.
  if (result.status === 'error' && result.error !== undefined && SessionWriteError.isInstance(result.error))
    terminal.stderr.write(`rho: ${result.error.message}\n`);
  // A new session that failed before its first model call (a configuration problem found only
  // when the run started) holds nothing worth resuming: it is not kept. Once the model was called,
  // the trace says what happened and stays.
  if (
    !setup.resumed &&
    result.status === 'error' &&
    modelAnswers === 0 &&
    ConfigError.isInstance(result.error) &&
    session.directory !== undefined
  ) {
    await setup.workspace?.drop().catch(() => {});
    rmSync(session.directory, { recursive: true, force: true });
    if (!argv.json) terminal.stderr.write('No session was saved: the run failed before the model answered.\n');
    return exitCodeForStatus(result.status);
  }
  if (changes !== undefined) {
    if (argv.json) onNotice(changes);
    else terminal.stderr.write(`${changes}\n`);
  }
  if (!argv.json) terminal.stderr.write(`Session: ${session.id} (resume with: rho --resume ${session.id})\n`);
  if (argv.output !== undefined && result.status === 'completed') {
    const target = resolve(argv.output);
    try {
      mkdirSync(dirname(target), { recursive: true });
      writeNewFileWhole(target, result.text.endsWith('\n') ? result.text : `${result.text}\n`);
    } catch (error) {
      // The run completed but its answer is not where it was asked for: not a success. What the
      // file would hold is in the session's trace, and the file is not left cut off.
      const hint = `The answer was not saved there; it is in the session: rho export ${session.id}.`;
      terminal.stderr.write(`rho: ${SessionWriteError.from(target, error, hint).message}\n`);
      return EXIT.failed;
    }
    if (!argv.json) terminal.stderr.write(`Output written to: ${target}\n`);
  } else if (argv.output !== undefined && result.status === 'truncated') {
    // A cut-off answer written to a file would pass for a whole one: it is not written.
    terminal.stderr.write(
      `rho: ${resolve(argv.output)} was not written: the answer is incomplete (cut off at the model's output limit).\n`,
    );
  }
  // Every tool call refused: whatever the model said, the task was not done the way it was asked.
  if (result.status === 'refused') {
    const reasons = [...new Set(blocked)];
    const byUser = blocked.every((reason) => reason.endsWith(': rejected by the user'));
    const hint = byUser
      ? ''
      : autoApprove
        ? ' Choose a profile that allows them (--profile).'
        : ' Pass -y to approve tool calls, or --profile to choose another profile.';
    terminal.stderr.write(
      `rho: every tool call was refused (${blocked.length}): ${reasons.slice(0, 3).join('; ')}${reasons.length > 3 ? '; ...' : ''}.${hint}\n`,
    );
    blocked = [];
    return EXIT.refused;
  }
  if (result.status === 'waiting_approval') {
    const waiting = session.pendingApprovals().map((call) => call.toolCallId);
    terminal.stderr.write(
      `rho: the run stopped while ${waiting.length === 1 ? `call ${waiting[0]} waits` : `calls ${waiting.join(', ')} wait`} for approval: answer with rho approve ${session.id} or rho deny ${session.id}, then continue with rho --resume ${session.id}.\n`,
    );
  }
  return exitCodeForStatus(result.status);
}

/** The line that says a call waits, for whom, until when, and how to answer it. */
function waitingNotice(sessionId: string, request: ApprovalRequestedEvent): string {
  const until =
    request.expires_at === undefined
      ? ''
      : `; at ${request.expires_at.replace('T', ' ').slice(0, 19)} UTC it is ${request.on_timeout === 'approve' ? 'approved' : 'denied'}`;
  return [
    `Waiting for approval: ${toolSignature(request.tool_name, request.tool_args, 160)} (call ${request.tool_call_id})`,
    `  risk: ${request.reason ?? 'the profile asks for approval of this tool'}${request.dangerous === undefined ? '' : ` (dangerous pattern "${request.dangerous}")`}`,
    `  answer from any terminal: rho approve ${sessionId}   or   rho deny ${sessionId} --reason "..."${until}`,
  ].join('\n');
}

function terminalWidth(terminal: Terminal): number {
  return (terminal.stdout as { columns?: number }).columns ?? (terminal.stderr as { columns?: number }).columns ?? 100;
}
