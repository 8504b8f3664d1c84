import { EventEmitter } from 'node:events';
import type { ListedSession } from '@rho/monitor';
import { describe, expect, it } from 'vitest';
import { pickSession } from './repl-resume.js';
import type { PickerEntry } from './resume-picker.js';
import { pickerChoice, pickerSessions, renderPicker } from './resume-picker.js';

const now = Date.parse('2026-11-02T12:00:00Z');
const hoursAgo = (hours: number) => new Date(now - hours * 3_600_000).toISOString();

function listed(id: string, fields: Partial<ListedSession> = {}): ListedSession {
  return { id, status: 'completed', recordedStatus: 'completed', startedAt: hoursAgo(5), ...fields };
}

function entry(id: string, fields: Partial<PickerEntry> = {}): PickerEntry {
  return { id, status: 'completed', activeAt: hoursAgo(3), children: 0, ...fields };
}

describe('pickerSessions', () => {
  it('offers the most recently active sessions first, without the current one, child agents or sessions never prompted', () => {
    const sessions = [
      listed('cur00001', { firstPrompt: 'the REPL itself', updatedAt: hoursAgo(0) }),
      listed('old00002', { firstPrompt: 'started late, idle since', startedAt: hoursAgo(2), updatedAt: hoursAgo(2) }),
      listed('kid00003', { firstPrompt: 'a delegated part', parentId: 'new00004', updatedAt: hoursAgo(0.5) }),
      listed('kid00005', { firstPrompt: 'another part', parentId: 'new00004', updatedAt: hoursAgo(0.5) }),
      listed('new00004', {
        firstPrompt: 'started early, used an hour ago',
        startedAt: hoursAgo(9),
        updatedAt: hoursAgo(1),
      }),
      listed('emp00006', { status: 'created', recordedStatus: 'created', updatedAt: hoursAgo(0.1) }),
      listed('pro00007', { status: 'dead', recordedStatus: 'running', firstPrompt: 'crashed' }),
    ];
    const entries = pickerSessions(sessions, 'cur00001');
    expect(entries.map((picked) => picked.id)).toEqual(['new00004', 'old00002', 'pro00007']);
    expect(entries[0]).toEqual({
      id: 'new00004',
      status: 'completed',
      activeAt: hoursAgo(1),
      firstPrompt: 'started early, used an hour ago',
      children: 2,
    });
    expect(entries[2]).toMatchObject({ status: 'dead', activeAt: hoursAgo(5) });
  });

  it('offers ten at most', () => {
    const sessions = Array.from({ length: 14 }, (_, index) =>
      listed(`s${String(index).padStart(7, '0')}`, { firstPrompt: `task ${index}`, updatedAt: hoursAgo(index) }),
    );
    const entries = pickerSessions(sessions, 'none');
    expect(entries).toHaveLength(10);
    expect(entries[0]!.firstPrompt).toBe('task 0');
    expect(entries[9]!.firstPrompt).toBe('task 9');
  });
});

describe('renderPicker', () => {
  const entries = [
    entry('ab12cd34', { runs: 3, tokens: 12_400, firstPrompt: 'fix the parser\nand its tests', activeAt: hoursAgo(3) }),
    entry('0f0f0f0f', {
      status: 'dead',
      runs: 1,
      tokens: 850,
      firstPrompt: 'migrate the schema',
      activeAt: hoursAgo(50),
    }),
    entry('a-chosen-id-that-is-long', { status: 'limit', children: 1, firstPrompt: 'delegate the review' }),
  ];

  it('numbers the sessions with short id, age, status, runs, tokens and the first prompt on one line', () => {
    expect(renderPicker(entries, { width: 120, now })).toEqual([
      'Recent sessions (most recently active first):',
      '  1  ab12cd34      3h ago  completed  3 runs  12.4K tok  fix the parser and its tests',
      '  2  0f0f0f0f      2d ago  dead        1 run    850 tok  migrate the schema',
      '  3  a-chosen-id…  3h ago  limit           -          -  (+1 child) delegate the review',
      'Type a number (1-3) or an id and Enter to resume; Enter alone or Esc goes back.',
    ]);
  });

  it('cuts the prompt to fit the width, at a word, and never lets a line wrap', () => {
    const long = [entry('ab12cd34', { runs: 2, tokens: 100, firstPrompt: 'refactor '.repeat(20).trim() })];
    const lines = renderPicker(long, { width: 70, now });
    expect(lines[1]).toBe('  1  ab12cd34  3h ago  completed  2 runs  100 tok  refactor refactor…');
    for (const width of [30, 50, 70])
      for (const line of renderPicker(entries, { width, now })) expect(line.length).toBeLessThan(width);
  });

  it('says so when there is nothing to offer', () => {
    expect(renderPicker([], { width: 80, now })).toEqual(['No other session to resume in this sessions directory.']);
  });
});

describe('pickerChoice', () => {
  const entries = [entry('ab12cd34'), entry('0f0f0f0f'), entry('abff0000')];

  it('reads a number of the list, a prefix of a listed id, or any other reference', () => {
    expect(pickerChoice(' 2 ', entries)).toEqual({ kind: 'resume', reference: '0f0f0f0f' });
    expect(pickerChoice('ab1', entries)).toEqual({ kind: 'resume', reference: 'ab12cd34' });
    // Ambiguous among the listed, or not listed: /resume resolves it in the whole directory.
    expect(pickerChoice('ab', entries)).toEqual({ kind: 'resume', reference: 'ab' });
    expect(pickerChoice('latest', entries)).toEqual({ kind: 'resume', reference: 'latest' });
    expect(pickerChoice('12345678', entries)).toEqual({ kind: 'resume', reference: '12345678' });
  });

  it('goes back on an empty answer and refuses numbers off the list and sentences', () => {
    expect(pickerChoice('', entries)).toEqual({ kind: 'back' });
    expect(pickerChoice('   ', entries)).toEqual({ kind: 'back' });
    expect(pickerChoice('0', entries)).toEqual({ kind: 'invalid', message: 'Choose a number from 1 to 3.' });
    expect(pickerChoice('4', entries)).toEqual({ kind: 'invalid', message: 'Choose a number from 1 to 3.' });
    expect(pickerChoice('fix the bug', entries)).toEqual({
      kind: 'invalid',
      message: 'Type a number from the list or a session id.',
    });
  });
});

describe('pickSession', () => {
  function io(answers: (string | null)[]) {
    const written: string[] = [];
    const keys = new EventEmitter();
    const questions: string[] = [];
    return {
      written,
      keys,
      questions,
      io: {
        write: (text: string) => void written.push(text),
        ask: (question: string, signal: AbortSignal) => {
          questions.push(question);
          const answer = answers.shift();
          if (answer !== undefined) return Promise.resolve(answer);
          // No answer scripted: wait until the question is withdrawn.
          return new Promise<string | null>((resolve) => signal.addEventListener('abort', () => resolve(null)));
        },
        keys,
        width: 80,
        color: false,
      },
    };
  }
  const entries = [entry('ab12cd34'), entry('0f0f0f0f')];

  it('asks again after a number off the list, and returns the chosen id', async () => {
    const { io: picker, written, questions } = io(['5', '1']);
    await expect(pickSession(entries, picker, new AbortController())).resolves.toBe('ab12cd34');
    expect(written.join('')).toContain('Choose a number from 1 to 2.\n');
    expect(questions).toEqual(['Resume which? ', 'Resume which? ']);
  });

  it('goes back on Esc and on the REPL withdrawing the question (Ctrl+C), and stops listening for keys', async () => {
    const escaped = io([]);
    const choosing = pickSession(entries, escaped.io, new AbortController());
    await Promise.resolve();
    escaped.keys.emit('keypress', '\u001b', { name: 'escape' });
    await expect(choosing).resolves.toBeUndefined();
    expect(escaped.keys.listenerCount('keypress')).toBe(0);

    const interrupted = io([]);
    const cancel = new AbortController();
    const waiting = pickSession(entries, interrupted.io, cancel);
    cancel.abort();
    await expect(waiting).resolves.toBeUndefined();
  });

  it('asks nothing when there is no session', async () => {
    const { io: picker, written, questions } = io([]);
    await expect(pickSession([], picker, new AbortController())).resolves.toBeUndefined();
    expect(written).toEqual(['No other session to resume in this sessions directory.\n']);
    expect(questions).toEqual([]);
  });
});
