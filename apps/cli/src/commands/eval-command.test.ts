import type { SqlEvalEvent, SqlQuestionResult } from '@rho/eval';
import { describe, expect, it } from 'vitest';
import { styles } from '../terminal.js';
import type { Terminal } from '../terminal.js';
import { createEvalProgress } from './eval-command.js';

/** A terminal whose streams keep what is written, synchronously (the progress only calls write). */
function fakeTerminal(tty: boolean): { terminal: Terminal; stdout: () => string; stderr: () => string } {
  const written = { stdout: '', stderr: '' };
  const stream = (name: 'stdout' | 'stderr') =>
    ({
      isTTY: tty && name === 'stderr',
      write(chunk: string | Uint8Array) {
        written[name] += chunk.toString();
        return true;
      },
    }) as unknown as Terminal['stdout'];
  return {
    terminal: { stdout: stream('stdout'), stderr: stream('stderr'), color: false },
    stdout: () => written.stdout,
    stderr: () => written.stderr,
  };
}

const result = (id: string, correct: boolean): SqlQuestionResult => ({
  type: 'result',
  question_id: id,
  db_id: 'chinook',
  difficulty: 'simple',
  question: 'q',
  status: correct ? 'correct' : 'incorrect',
  correct,
  predicted_sql: 'SELECT 1',
  answer_source: 'submit_sql',
  gold_sql: 'SELECT 1',
  session_id: 's',
  trace_path: '/t',
  run_status: 'completed',
  usage: { input_tokens: 1, output_tokens: 1, cached_tokens: 0, reasoning_tokens: 0, cost_usd: 0.01 },
  duration_ms: 1,
  finished_at: '2026-01-01T00:00:00Z',
});

const events: SqlEvalEvent[] = [
  { type: 'eval_start', total: 4, done: 1, correct: 1, cost_usd: 0.01, concurrency: 2, results_path: '/r.jsonl' },
  { type: 'question_start', question_id: '1', session_id: 'a' },
  { type: 'question_start', question_id: '2', session_id: 'b' },
  { type: 'question_end', result: result('1', false), done: 2, total: 4, correct: 1, accuracy: 0.5, cost_usd: 0.02 },
];

describe('createEvalProgress', () => {
  it('redraws one bar line on a terminal with done/total, running accuracy, cost and questions in flight, and clears it', () => {
    const { terminal, stderr } = fakeTerminal(true);
    const progress = createEvalProgress(terminal, { json: false, bar: true, paint: styles(false) });
    for (const event of events) progress.event(event);
    const last = stderr().split('\r\u001b[2K').at(-1);
    expect(last).toBe('[###############...............] 2/4  accuracy 50.0%  $0.0200  running 1');
    expect(stderr()).toContain('rho eval sql: 4 questions (1 already done), 2 at a time; results in /r.jsonl\n');
    progress.note('Stopping');
    expect(stderr()).toContain('\r\u001b[2K\nStopping\n[###############');
    progress.end();
    expect(stderr().endsWith('\r\u001b[2K')).toBe(true);
  });

  it('writes one plain line per question elsewhere, and JSON lines on stdout with --json', () => {
    const plain = fakeTerminal(false);
    const progress = createEvalProgress(plain.terminal, { json: false, bar: false, paint: styles(false) });
    for (const event of events) progress.event(event);
    expect(
      plain
        .stderr()
        .split('\n')
        .filter((line) => line !== ''),
    ).toEqual([
      'rho eval sql: 4 questions (1 already done), 2 at a time; results in /r.jsonl',
      '[2/4] 1 simple incorrect  accuracy 50.0%  $0.0200',
    ]);

    const json = fakeTerminal(false);
    const jsonProgress = createEvalProgress(json.terminal, { json: true, bar: false, paint: styles(false) });
    for (const event of events) jsonProgress.event(event);
    expect(json.stderr()).toBe('');
    expect(
      json
        .stdout()
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as SqlEvalEvent),
    ).toEqual(events);
  });
});
