// The REPL's `/resume` picker at work: the sessions it offers, read from the sessions directory
// (@rho/monitor's listing, and each offered session's trace for its runs and tokens), and the
// question asked until the answer is a choice. What it shows is resume-picker.ts's.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { State, TraceReader } from '@rho/core';
import { listSessions } from '@rho/monitor';
import type { PickerEntry } from './resume-picker.js';
import { pickerChoice, pickerSessions, renderPicker } from './resume-picker.js';
import type { Terminal } from './terminal.js';
import { styles } from './terminal.js';

/** A trace larger than this is not read for the picker (its runs and tokens show as `-`). */
const TRACE_READ_LIMIT = 16 * 1024 * 1024;

/** The sessions the picker offers from `sessionsDirectory`, with their runs and tokens. */
export function loadPickerEntries(sessionsDirectory: string, currentId: string): PickerEntry[] {
  const listed = listSessions(sessionsDirectory, { promptFromTrace: true });
  const directories = new Map(listed.map((session) => [session.id, session.directory]));
  return pickerSessions(listed, currentId).map((entry) => ({
    ...entry,
    ...traceCounts(directories.get(entry.id) ?? join(sessionsDirectory, entry.id)),
  }));
}

function traceCounts(directory: string): { runs?: number; tokens?: number } {
  const path = join(directory, 'trace.jsonl');
  try {
    if (statSync(path).size > TRACE_READ_LIMIT) return {};
    const bytes = readFileSync(path);
    let runs = 0;
    TraceReader.read(
      bytes,
      {
        record(record) {
          if (record.type === 'run_start') runs += 1;
        },
      },
      { ignoreTypes: ['llm_start', 'llm_end', 'text', 'reasoning', 'message', 'tool_start', 'tool_end'] },
    );
    const { usage } = State.fromJsonl(bytes);
    return { runs, tokens: usage.input_tokens + usage.output_tokens };
  } catch {
    // No trace yet (a session made but never run), or one that cannot be read.
    return {};
  }
}

/** What {@link pickSession} needs of the REPL. */
export interface PickerIo {
  /** Writes to the terminal (stderr). */
  write(text: string): void;
  /** Asks a question on the prompt line; null when the question was withdrawn (`signal`). */
  ask(question: string, signal: AbortSignal): Promise<string | null>;
  /** Where readline emits the terminal's keypresses (stdin): Esc goes back. */
  keys: NodeJS.EventEmitter;
  width: number;
  color: boolean;
}

/**
 * Shows the picker and asks until the answer is a choice: the reference to resume, or undefined
 * to go back (Enter alone, Esc, or `cancel` aborted: the REPL's Ctrl+C). No sessions: says so.
 */
export async function pickSession(
  entries: readonly PickerEntry[],
  io: PickerIo,
  cancel: AbortController,
): Promise<string | undefined> {
  for (const line of renderPicker(entries, { width: io.width, color: io.color })) io.write(`${line}\n`);
  if (entries.length === 0) return undefined;
  const onKey = (_text: string | undefined, key: { name?: string } | undefined) => {
    if (key?.name === 'escape') cancel.abort();
  };
  io.keys.on('keypress', onKey);
  try {
    for (;;) {
      const answer = await io.ask(styles(io.color).cyan('Resume which? '), cancel.signal);
      if (answer === null) return undefined;
      const choice = pickerChoice(answer, entries);
      if (choice.kind === 'back') return undefined;
      if (choice.kind === 'resume') return choice.reference;
      io.write(`${choice.message}\n`);
    }
  } finally {
    io.keys.off('keypress', onKey);
  }
}

/** What {@link chooseSession} needs of the REPL. */
export interface ChooseSessionInput {
  /** `$RHO_HOME`: its `sessions` directory is listed. */
  home: string;
  /** The REPL's session, never offered. */
  currentId: string;
  terminal: Terminal;
  ask: PickerIo['ask'];
  /** Aborted by the REPL's Ctrl+C (and by Esc): back to the prompt. */
  cancel: AbortController;
}

/**
 * `/resume` without an argument: at a terminal, the picker, and the reference chosen (undefined:
 * stay, with a line saying so). When stdin is not a terminal, the table of `rho ps` and a hint.
 */
export async function chooseSession(input: ChooseSessionInput): Promise<string | undefined> {
  const { terminal } = input;
  const style = styles(terminal.color);
  if (process.stdin.isTTY !== true) {
    const { listSessionsCommand } = await import('./commands/list-command.js');
    await listSessionsCommand({ json: false }, terminal, { ...process.env, RHO_HOME: input.home });
    terminal.stderr.write(style.dim('Use /resume <id|prefix|latest>.\n'));
    return undefined;
  }
  const entries = loadPickerEntries(join(input.home, 'sessions'), input.currentId);
  const chosen = await pickSession(
    entries,
    {
      write: (text) => terminal.stderr.write(text),
      ask: input.ask,
      keys: process.stdin,
      width: process.stdout.columns ?? 80,
      color: terminal.color,
    },
    input.cancel,
  );
  if (chosen === undefined && entries.length > 0)
    terminal.stderr.write(style.dim(`Staying in session ${input.currentId}.\n`));
  return chosen;
}
