import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import type { Session } from '@rho/core';
import { createApprovalMemory, createTerminalApprover } from './approval-prompt.js';
import { EXIT } from './exit-codes.js';
import { exitAfterClosing } from './exit-cleanup.js';
import { formatUsage } from './format.js';
import type { MarkdownRenderer } from './markdown.js';
import type { EventRenderer } from './render.js';
import { createEventRenderer } from './render.js';
import { promptToSend, replayNotes } from './replay-notes.js';
import { resumePreview } from './resume-preview.js';
import { REPL_COMMANDS } from './slash-commands.js';
import type { RunSetup } from './run-setup.js';
import type { Terminal } from './terminal.js';
import { appendHistory, HISTORY_LIMIT, loadHistory, statusLines, transferCommand } from './repl-helpers.js';
import { styles } from './terminal.js';

/** Options of the REPL. */
export interface ReplOptions {
  autoApprove: boolean;
  /** Re-creates the run setup for another session (`/resume`). */
  resume?: (reference: string) => Promise<RunSetup>;
  /** Renders answers as Markdown (stdout is a terminal). */
  markdown?: MarkdownRenderer;
}

/**
 * What readline writes, gated: while a run streams its output, what a person types ahead is kept
 * in readline's line but not echoed into the answer; the prompt is redrawn with it (cursor where
 * it was) when the run ends.
 */
class EchoGate extends Writable {
  muted = false;
  readonly isTTY = true;

  constructor(private readonly target: NodeJS.WriteStream) {
    super();
    target.on('resize', () => this.emit('resize'));
  }

  get columns(): number {
    return this.target.columns ?? 80;
  }

  get rows(): number {
    return this.target.rows ?? 24;
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (!this.muted) this.target.write(chunk);
    callback();
  }
}

/**
 * The interactive loop: streaming answers (Markdown rendered), tool lines with previews and
 * diffs, a status line, approvals (Enter refuses; yes, always this call, always this tool), slash
 * commands, multi-line input (end a line with `\` to continue; pasted lines are taken together),
 * typing ahead during a run (lines sent with Enter are queued), history across sessions in
 * `$RHO_HOME/history`. Ctrl+C cancels the current run; at the prompt, a second Ctrl+C or Ctrl+D
 * exits.
 */
export async function runRepl(initial: RunSetup, terminal: Terminal, options: ReplOptions): Promise<number> {
  let setup = initial;
  let session: Session = setup.session;
  const style = styles(terminal.color);
  const historyPath = join(setup.home, 'history');
  const memory = createApprovalMemory();
  let autoApprove = options.autoApprove;
  let running = false;
  let interruptsAtPrompt = 0;
  let interruptsInRun = 0;
  let renderer: EventRenderer | undefined;
  /** The `/resume` picker's question, while it is asked: Ctrl+C withdraws it. */
  let picking: AbortController | undefined;
  /** Lines sent with Enter while a run was in progress, run in order after it. */
  const queued: string[] = [];

  const echo = new EchoGate(process.stdout);
  const readline = createInterface({
    input: process.stdin,
    output: echo,
    terminal: true,
    historySize: HISTORY_LIMIT,
    history: loadHistory(historyPath),
    removeHistoryDuplicates: true,
    completer: (line: string) => {
      if (!line.startsWith('/')) return [[], line];
      const hits = Object.keys(REPL_COMMANDS).filter((command) => command.startsWith(line));
      return [hits, line];
    },
  });
  const prompt = () => {
    readline.setPrompt(style.cyan('› '));
    // Keeps what was typed ahead during a run, with the cursor where it was.
    readline.prompt(true);
  };
  const ask = (question: string, signal?: AbortSignal) =>
    new Promise<string | null>((resolve) => {
      // The question gets a clean line: text typed ahead is set aside and put back afterwards.
      const typedAhead = readline.line;
      const cursor = readline.cursor;
      readline.write(null, { ctrl: true, name: 'e' });
      readline.write(null, { ctrl: true, name: 'u' });
      echo.muted = false;
      const restore = () => {
        echo.muted = running;
        if (typedAhead !== '') {
          readline.write(typedAhead);
          for (let index = typedAhead.length; index > cursor; index -= 1) readline.write(null, { name: 'left' });
        }
      };
      // Answered elsewhere while asking: the question is withdrawn (readline drops its callback).
      const onAbort = () => {
        terminal.stderr.write('\n');
        restore();
        resolve(null);
      };
      if (signal?.aborted === true) {
        restore();
        resolve(null);
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      readline.question(question, signal === undefined ? {} : { signal }, (answer) => {
        signal?.removeEventListener('abort', onAbort);
        restore();
        resolve(answer);
      });
    });
  const attachApprover = () => {
    const terminalApprover = createTerminalApprover(terminal, {
      ask,
      memory,
      workingDir: setup.workingDir,
      beforeAsk: () => renderer?.pauseStatus(),
    });
    session.approver = (request) => (autoApprove ? true : terminalApprover(request));
  };
  attachApprover();

  terminal.stderr.write(
    `${style.bold('ρ rho')} ${style.dim(`· model ${setup.model} · profile ${setup.profile.name} · session ${session.id}`)}\n`,
  );
  terminal.stderr.write(style.dim('Type a task. /help for commands. Ctrl+C cancels a run; Ctrl+D exits.\n'));
  if (setup.resumed) {
    terminal.stderr.write(style.dim(`Resumed session ${session.id} (${session.state.messages.length} messages).\n`));
    for (const note of replayNotes(session)) terminal.stderr.write(style.yellow(`${note}\n`));
    for (const line of resumePreview(session.state.messages, style)) terminal.stderr.write(`${line}\n`);
  }

  const runTask = async (task: string) => {
    running = true;
    interruptsInRun = 0;
    // readline keeps reading while a run is in progress: it delivers Ctrl+C (the terminal is in
    // raw mode), answers approval questions and keeps what is typed ahead (not echoed meanwhile).
    echo.muted = true;
    const current = session;
    renderer = createEventRenderer({
      mode: 'live',
      gatherPerTick: true,
      color: terminal.color,
      out: (text) => terminal.stdout.write(text),
      err: (text) => terminal.stderr.write(text),
      statusLine: terminal.stderr.isTTY === true,
      ...(options.markdown === undefined ? {} : { markdown: options.markdown }),
      workingDir: setup.workingDir,
      contextWindow: () => current.contextWindow,
      width: process.stdout.columns ?? 100,
    });
    try {
      const result = await session.run(promptToSend(session, task), { onEvent: renderer });
      renderer.flush();
      // The last turn's checkpoint (/undo goes back to it); what an isolated run changed so far.
      const changes = await setup.workspace?.afterRun(session.id).catch(() => undefined);
      if (changes !== undefined) terminal.stderr.write(style.dim(`${changes}\n`));
      if (result.status === 'error' && result.error !== undefined)
        terminal.stderr.write(
          style.dim(
            'The run failed; fix the problem above and try again (sending the same task again does not repeat it).\n',
          ),
        );
    } finally {
      renderer.finish();
      renderer = undefined;
      running = false;
      echo.muted = false;
    }
  };

  /** `/resume` alone: the picker (repl-resume.ts); what it chose, or undefined to stay. */
  const pickToResume = async (): Promise<string | undefined> => {
    picking = new AbortController();
    try {
      const { chooseSession } = await import('./repl-resume.js');
      return await chooseSession({ home: setup.home, currentId: session.id, terminal, ask, cancel: picking });
    } finally {
      picking = undefined;
    }
  };

  const handleCommand = async (line: string): Promise<'exit' | void> => {
    const [command = '', ...rest] = line.split(/\s+/);
    const argument = line.slice(command.length).trim();
    switch (command.toLowerCase()) {
      case '/exit':
      case '/quit':
        return 'exit';
      case '/help':
        for (const [name, text] of Object.entries(REPL_COMMANDS))
          terminal.stderr.write(`  ${style.cyan(name.padEnd(9))} ${text}\n`);
        terminal.stderr.write(
          style.dim('  Input: end a line with \\ to continue it; pasted lines are sent together.\n'),
        );
        return;
      case '/clear':
        terminal.stdout.write('\u001b[2J\u001b[H');
        return;
      case '/approve':
        autoApprove = !autoApprove;
        terminal.stderr.write(
          autoApprove
            ? 'Auto-approve enabled for this session.\n'
            : 'Auto-approve disabled: tool calls that need approval will ask.\n',
        );
        return;
      case '/status': {
        const window = await session.resolveContextWindow();
        terminal.stderr.write(`${statusLines({ setup, session, window, autoApprove, memory }).join('\n')}\n`);
        return;
      }
      case '/upload':
      case '/download':
        await transferCommand(
          command.toLowerCase() === '/upload' ? 'upload' : 'download',
          rest,
          setup.backend,
          terminal,
        );
        return;
      case '/compact': {
        terminal.stderr.write('Compacting conversation...\n');
        const result = await session.compact({ instructions: argument });
        if (result.ok) {
          terminal.stderr.write(`Compacted: ${result.tokensBefore} -> ${result.tokensAfter} tokens\n`);
          terminal.stderr.write(
            style.dim('Note: several compactions in a row can lose detail; start a new session when you can.\n'),
          );
        } else {
          terminal.stderr.write(`${style.red('Error:')} ${result.error}\n`);
        }
        return;
      }
      case '/undo': {
        const { replUndo } = await import('./commands/workspace-actions.js');
        await replUndo(setup.workspace, argument, {
          out: (text) => terminal.stdout.write(text),
          err: (text) => terminal.stderr.write(text),
          color: terminal.color,
          confirm: async (question) => /^(y|yes)$/i.test(((await ask(`${question} [y/N] `)) ?? '').trim()),
        });
        return;
      }
      case '/resume': {
        if (options.resume === undefined) {
          terminal.stderr.write('Resuming is not available here.\n');
          return;
        }
        const reference = rest.length > 0 ? argument : await pickToResume();
        if (reference === undefined) return;
        try {
          const previous = setup;
          setup = await options.resume(reference);
          void previous.close().catch(() => {});
          session = setup.session;
          attachApprover();
          terminal.stderr.write(
            `Resumed session ${session.id} (${session.state.messages.length} messages, ${formatUsage(session.state.usage)}).\n`,
          );
          for (const line of resumePreview(session.state.messages, style)) terminal.stderr.write(`${line}\n`);
        } catch (error) {
          terminal.stderr.write(`${style.red('Error:')} ${(error as Error).message}\n`);
        }
        return;
      }
      default:
        terminal.stderr.write(`Unknown command ${command}. Type /help for the list.\n`);
    }
  };

  return new Promise<number>((resolve) => {
    let buffer: string[] = [];
    let pasteTimer: NodeJS.Timeout | undefined;
    let closing = false;

    const finish = () => {
      if (closing) return;
      closing = true;
      terminal.stderr.write(
        session.state.messages.length > 0 ? `\nGoodbye! Session saved: ${session.id}\n` : '\nGoodbye!\n',
      );
      readline.close();
      void setup
        .close()
        .catch(() => {})
        .finally(() => {
          process.off('SIGTERM', onTerminate);
          resolve(0);
        });
    };

    const submit = async () => {
      pasteTimer = undefined;
      const input = buffer.join('\n').trim();
      buffer = [];
      if (input === '') {
        prompt();
        return;
      }
      appendHistory(historyPath, input);
      if (['exit', 'quit'].includes(input.toLowerCase())) return finish();
      if (input.startsWith('/')) {
        if ((await handleCommand(input)) === 'exit') return finish();
      } else {
        await runTask(input);
      }
      if (closing) return;
      const next = queued.shift();
      if (next !== undefined) {
        terminal.stderr.write(`${style.cyan('› ')}${next}\n`);
        buffer = [next];
        return submit();
      }
      prompt();
    };

    readline.on('line', (line) => {
      if (running) {
        // Sent while the agent works: run it next, as typed.
        if (line.trim() !== '') {
          queued.push(line);
          terminal.stderr.write(
            style.dim(`\r\u001b[K(queued: ${line.length > 60 ? `${line.slice(0, 59)}…` : line})\n`),
          );
        }
        return;
      }
      interruptsAtPrompt = 0;
      if (line.endsWith('\\')) {
        buffer.push(line.slice(0, -1));
        readline.setPrompt(style.dim('… '));
        readline.prompt();
        return;
      }
      buffer.push(line);
      // Lines arriving together are a paste: wait a moment and send them as one input.
      if (pasteTimer !== undefined) clearTimeout(pasteTimer);
      pasteTimer = setTimeout(() => void submit(), 25);
    });
    readline.on('SIGINT', () => {
      if (picking !== undefined) return picking.abort();
      if (running) {
        renderer?.flush();
        if (interruptsInRun > 0) return exitAfterClosing(EXIT.cancelled);
        interruptsInRun += 1;
        terminal.stderr.write('\nCancelling... (Ctrl+C again to quit)\n');
        session.cancel();
        return;
      }
      if (buffer.length > 0 || readline.line !== '') {
        buffer = [];
        readline.write(null, { ctrl: true, name: 'u' });
        terminal.stderr.write('\n');
        prompt();
        return;
      }
      interruptsAtPrompt += 1;
      if (interruptsAtPrompt >= 2) return finish();
      terminal.stderr.write(style.dim('\n(Ctrl+C again or Ctrl+D to exit)\n'));
      prompt();
    });
    readline.on('close', finish);
    // SIGTERM (a supervisor stopping rho): cancel a run under way, release the backend, exit.
    const onTerminate = (): void => {
      renderer?.flush();
      if (running) session.cancel();
      exitAfterClosing(EXIT.cancelled);
    };
    process.once('SIGTERM', onTerminate);
    prompt();
  });
}
