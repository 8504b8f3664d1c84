// The REPL's `/resume` picker, pure: which sessions it offers, the lines it shows, and what an
// answer chooses. Reading the sessions directory and asking are in repl-resume.ts.
import type { ListedSession } from '@rho/monitor';
import { clipWords, formatAge, formatTokens } from './format.js';
import { styles } from './terminal.js';

/** How many sessions the picker offers. */
export const PICKER_LIMIT = 10;

/** One session the picker offers. */
export interface PickerEntry {
  id: string;
  status: string;
  /** When it was last active (its record's last write, else its start): the age shown. */
  activeAt: string;
  firstPrompt?: string;
  /** Runs in its trace (prompts sent); undefined when the trace was not read. */
  runs?: number;
  /** Input and output tokens of the whole session; undefined when the trace was not read. */
  tokens?: number;
  /** Its child agents' sessions (listed under it by `rho ps`, not offered here). */
  children: number;
}

/**
 * The sessions to offer, most recently active first: not the current one, not a child agent's
 * (resumed through its parent; counted on it instead) and not one that never got a prompt.
 */
export function pickerSessions(
  sessions: readonly ListedSession[],
  currentId: string,
  limit = PICKER_LIMIT,
): PickerEntry[] {
  const children = new Map<string, number>();
  for (const session of sessions)
    if (session.parentId !== undefined) children.set(session.parentId, (children.get(session.parentId) ?? 0) + 1);
  return sessions
    .filter(
      (session) =>
        session.id !== currentId &&
        session.parentId === undefined &&
        !(session.recordedStatus === 'created' && (session.firstPrompt ?? '').trim() === ''),
    )
    .map((session) => ({
      id: session.id,
      status: session.status,
      activeAt: session.updatedAt ?? session.startedAt,
      ...(session.firstPrompt === undefined ? {} : { firstPrompt: session.firstPrompt }),
      children: children.get(session.id) ?? 0,
    }))
    .sort((a, b) => activeMs(b) - activeMs(a))
    .slice(0, limit);
}

function activeMs(entry: PickerEntry): number {
  const ms = Date.parse(entry.activeAt);
  return Number.isNaN(ms) ? 0 : ms;
}

/** Options of {@link renderPicker}. */
export interface PickerRenderOptions {
  /** Terminal width: every line fits in it (the prompt is cut). */
  width: number;
  now?: number;
  color?: boolean;
}

/** Ids longer than this are shown cut (a prefix resumes them just as well). */
const ID_WIDTH = 12;

/**
 * The picker's lines: a title, one numbered line per session (number, short id, age, status,
 * runs, tokens, first prompt cut to fit `width`), and a hint. No sessions: one line saying so.
 */
export function renderPicker(entries: readonly PickerEntry[], options: PickerRenderOptions): string[] {
  const style = styles(options.color ?? false);
  if (entries.length === 0) return [style.dim('No other session to resume in this sessions directory.')];
  const now = options.now ?? Date.now();
  const rows = entries.map((entry, index) => ({
    number: `${index + 1}`,
    id: entry.id.length > ID_WIDTH ? `${entry.id.slice(0, ID_WIDTH - 1)}…` : entry.id,
    age: formatAge(entry.activeAt, now) === '-' ? '-' : `${formatAge(entry.activeAt, now)} ago`,
    status: entry.status,
    runs: entry.runs === undefined ? '-' : `${entry.runs} run${entry.runs === 1 ? '' : 's'}`,
    tokens: entry.tokens === undefined ? '-' : `${formatTokens(entry.tokens)} tok`,
    prompt: `${entry.children > 0 ? `(+${entry.children} child${entry.children === 1 ? '' : 'ren'}) ` : ''}${oneLine(entry.firstPrompt ?? '')}`,
  }));
  const width = (key: Exclude<keyof (typeof rows)[number], 'prompt'>) =>
    Math.max(...rows.map((row) => row[key].length));
  const widths = {
    number: width('number'),
    id: width('id'),
    age: width('age'),
    status: width('status'),
    runs: width('runs'),
    tokens: width('tokens'),
  };
  // Two spaces of indent and two between columns; the prompt gets what is left of the width.
  const lead = 2 + widths.number + 2;
  const fixed = lead + widths.id + widths.age + widths.status + widths.runs + widths.tokens + 10;
  const room = options.width - fixed - 1;
  const lines = rows.map((row) => {
    const rest = [
      row.id.padEnd(widths.id),
      row.age.padStart(widths.age),
      row.status.padEnd(widths.status),
      row.runs.padStart(widths.runs),
      row.tokens.padStart(widths.tokens),
      room >= 8 ? clipWords(row.prompt, room) : '',
    ]
      .join('  ')
      .trimEnd();
    // A terminal narrower than the fixed columns: the line is cut rather than wrapped.
    const fitted = room >= 8 ? rest : clipWords(rest, Math.max(1, options.width - lead - 1));
    return `  ${style.cyan(row.number.padStart(widths.number))}  ${fitted}`;
  });
  const fit = (text: string) => clipWords(text, Math.max(1, options.width - 1));
  return [
    style.bold(fit('Recent sessions (most recently active first):')),
    ...lines,
    style.dim(fit(`Type a number (1-${entries.length}) or an id and Enter to resume; Enter alone or Esc goes back.`)),
  ];
}

/** What an answer to the picker chooses. */
export type PickerChoice =
  { kind: 'back' } | { kind: 'resume'; reference: string } | { kind: 'invalid'; message: string };

/**
 * The answer read: empty goes back; a number of the list resumes that session; an id or a
 * prefix (one word) resumes what it names, the listed session it starts when it is one of them
 * (`/resume` resolves any other in the whole directory, `latest` included).
 */
export function pickerChoice(answer: string, entries: readonly PickerEntry[]): PickerChoice {
  const text = answer.trim();
  if (text === '') return { kind: 'back' };
  if (/^\d+$/.test(text)) {
    const entry = entries[Number(text) - 1];
    if (entry !== undefined && Number(text) >= 1) return { kind: 'resume', reference: entry.id };
    // A number that is not in the list may still be a session id (ids are hex).
    if (text.length < 4)
      return {
        kind: 'invalid',
        message:
          entries.length === 0 ? 'There is no session to choose.' : `Choose a number from 1 to ${entries.length}.`,
      };
  }
  if (/\s/.test(text)) return { kind: 'invalid', message: 'Type a number from the list or a session id.' };
  const listed = entries.filter((entry) => entry.id.startsWith(text));
  return { kind: 'resume', reference: listed.length === 1 ? listed[0]!.id : text };
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
