import { ConfigError } from '@rho/core';
import { describe, expect, it } from 'vitest';
import { deadlineFrom, parseTaskFile, parseTaskSpec } from './task-spec.js';
import { sessionArguments } from './session-runner.js';

const now = new Date('2026-01-01T00:00:00Z');

describe('task specs', () => {
  it('accepts a full task, sorting labels and turning a duration deadline into a time', () => {
    const task = parseTaskSpec(
      {
        prompt: 'audit',
        profile: 'developer',
        labels: ['b', 'a', 'b'],
        priority: 3,
        max_cost: 0.5,
        max_turns: 10,
        deadline: '30m',
        working_dir: '/srv/repo',
        workspace: 'isolated',
      },
      'x',
      now,
    );
    expect(task).toMatchObject({ labels: ['a', 'b'], deadline: '2026-01-01T00:30:00.000Z', priority: 3 });
    expect(sessionArguments(task)).toEqual([
      '--json',
      '-p',
      'audit',
      '--profile',
      'developer',
      '--working-dir',
      '/srv/repo',
      '--workspace',
      'isolated',
      '--max-turns',
      '10',
      '--max-cost',
      '0.5',
      '--auto-approve',
    ]);
  });

  it('names the field and what to fix', () => {
    expect(() => parseTaskSpec({ prompt: '' }, 't:1')).toThrow('t:1: prompt: required, a non-empty string.');
    expect(() => parseTaskSpec({ prompt: 'x', priorty: 1 }, 't:2')).toThrow(/t:2: priorty: unknown field/);
    expect(() => parseTaskSpec({ prompt: 'x', max_turns: 1.5 }, 't:3')).toThrow(
      't:3: max_turns: must be a whole number.',
    );
    expect(() => parseTaskSpec({ prompt: 'x', labels: ['a b'] }, 't:4')).toThrow(/t:4: labels: a list of labels/);
    expect(() => parseTaskSpec({ prompt: 'x', deadline: 'soon' }, 't:5')).toThrow(/t:5: deadline: 'soon'/);
    expect(() => parseTaskSpec(['x'], 't:6')).toThrow(/t:6: a task is a JSON object/);
    expect(() => parseTaskSpec({ prompt: 'x', workspace: 'copy' }, 't:7')).toThrow(
      "t:7: workspace: 'copy' is neither isolated nor in-place.",
    );
    expect(() => parseTaskSpec({ prompt: 'x', workspace: true }, 't:8')).toThrow('t:8: workspace: must be a string.');
    expect(() =>
      parseTaskSpec(
        { prompt: 'q', workspace: 'isolated', sql_eval: { question_id: '1', db_id: 'c', dataset: 'x' } },
        't:9',
      ),
    ).toThrow(/t:9: workspace: does not apply to an sql_eval question/);
  });

  it('checks an eval question (sql_eval) and runs it as rho eval sql-task with the whole spec', () => {
    const spec = parseTaskSpec(
      {
        prompt: 'Question: how many?',
        model: 'm',
        max_turns: 5,
        sql_eval: { question_id: '7', db_id: 'shop', databases_dir: '/data/dbs', query_timeout: 10, max_retries: 0 },
      },
      'x',
    );
    expect(sessionArguments(spec)).toEqual(['eval', 'sql-task', '--task', JSON.stringify(spec)]);
    expect(
      parseTaskSpec({ prompt: 'q', sql_eval: { question_id: '1', db_id: 'c', dataset: 'chinook' } }, 'x'),
    ).toBeTruthy();
    expect(() => parseTaskSpec({ prompt: 'q', sql_eval: { question_id: '1', db_id: 'c' } }, 't:1')).toThrow(
      't:1: sql_eval.databases_dir: required unless dataset names a bundled dataset.',
    );
    expect(() =>
      parseTaskSpec({ prompt: 'q', sql_eval: { question_id: '1', db_id: 'c', dataset: 'x', query_timeout: 0 } }, 't:2'),
    ).toThrow('t:2: sql_eval.query_timeout: must be more than 0.');
    expect(() =>
      parseTaskSpec({ prompt: 'q', sql_eval: { question_id: '1', db_id: 'c', dataset: 'x', sql: 'x' } }, 't:3'),
    ).toThrow(/t:3: sql_eval.sql: unknown field/);
    expect(() => parseTaskSpec({ prompt: 'q', sql_eval: 'chinook' }, 't:4')).toThrow(/t:4: sql_eval: an object/);
  });

  it('reports every bad line of a tasks file with its number, and returns nothing then', () => {
    const text = [
      '{"prompt": "one"}',
      '',
      '# a comment',
      '{"prompt": "two", "priority": "high"}',
      '{not json',
      '{"prompt": "three", "labels": ["ok"]}',
    ].join('\n');
    let error: unknown;
    try {
      parseTaskFile(text, 'tasks.jsonl');
    } catch (caught) {
      error = caught;
    }
    expect(ConfigError.isInstance(error)).toBe(true);
    const message = (error as Error).message;
    expect(message).toContain('2 bad lines in tasks.jsonl; nothing was submitted');
    expect(message).toContain('tasks.jsonl:4: priority: must be a whole number.');
    expect(message).toContain('tasks.jsonl:5: not valid JSON');
    expect(parseTaskFile('{"prompt":"a"}\n\n{"prompt":"b"}\n', 'ok.jsonl').map((task) => task.prompt)).toEqual([
      'a',
      'b',
    ]);
    expect(() => parseTaskFile('\n# only\n', 'empty.jsonl')).toThrow('empty.jsonl holds no task');
  });

  it('reads deadlines as ISO times or durations', () => {
    expect(deadlineFrom('2h', now)?.toISOString()).toBe('2026-01-01T02:00:00.000Z');
    expect(deadlineFrom('2026-02-01T10:00:00Z', now)?.toISOString()).toBe('2026-02-01T10:00:00.000Z');
    expect(deadlineFrom('tomorrow', now)).toBeUndefined();
  });
});
