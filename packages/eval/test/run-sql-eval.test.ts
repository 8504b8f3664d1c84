import { appendFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ModelClient } from '@rho/core';
import type { ScriptedStep } from '@rho/core/testing';
import { createScriptedModelClient } from '@rho/core/testing';
import { describe, expect, it } from 'vitest';
import { compareSqlEvalReports, formatSqlEvalComparison } from '../src/sql/compare-sql-eval-reports.js';
import type { SqlEvalEvent } from '../src/sql/run-sql-eval.js';
import { runSqlEval } from '../src/sql/run-sql-eval.js';
import type { SqlDataset, SqlQuestion } from '../src/sql/sql-dataset.js';
import { loadSqlDataset } from '../src/sql/sql-dataset.js';
import { formatSqlEvalReport, loadSqlEvalReport } from '../src/sql/sql-eval-report.js';
import { readSqlResults } from '../src/sql/sql-results-file.js';

const chinook = loadSqlDataset('chinook');
const ENDLESS = 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c';

function workspace(): { resultsPath: string; sessionsDir: string } {
  const directory = mkdtempSync(join(tmpdir(), 'rho-eval-run-'));
  return { resultsPath: join(directory, 'results.jsonl'), sessionsDir: join(directory, 'sessions') };
}

/** A dataset of the first `count` chinook questions. */
function firstQuestions(count: number): SqlDataset {
  return { ...chinook, questions: chinook.questions.slice(0, count) };
}

const submit = (sql: string, id = 'call_submit'): ScriptedStep => ({
  toolCalls: [{ id, name: 'submit_sql', arguments: { sql } }],
});
const done: ScriptedStep = { text: 'Submitted.' };

/** Scripted model clients per question id, recording which questions were put to a model. */
function scripted(scripts: Record<string, ScriptedStep[]>): {
  createClient: (question: SqlQuestion) => ModelClient;
  asked: string[];
  clients: ReturnType<typeof createScriptedModelClient>[];
} {
  const asked: string[] = [];
  const clients: ReturnType<typeof createScriptedModelClient>[] = [];
  return {
    asked,
    clients,
    createClient(question) {
      const steps = scripts[question.id];
      if (steps === undefined) throw new Error(`no script for question ${question.id}`);
      asked.push(question.id);
      const client = createScriptedModelClient({ model: 'gpt-4o-mini', steps });
      clients.push(client);
      return client;
    },
  };
}

describe('runSqlEval with the scripted model on the real Chinook file', () => {
  it('grades right, wrong, malformed, failing and budget-limited answers, and reports them', async () => {
    const dataset = firstQuestions(7);
    const q = dataset.questions;
    const script = scripted({
      // right, through submit_sql, after exploring with the database tool (the 2-call budget
      // then ends the session, and the last submission still counts)
      [q[0]!.id]: [
        { toolCalls: [{ name: 'sqlite', arguments: { operation: 'query', sql: 'SELECT COUNT(*) FROM Artist' } }] },
        submit('select count(ArtistId) from Artist;'),
        done,
      ],
      // right, through the last fenced sql block of the final answer
      [q[1]!.id]: [
        { text: 'First guess:\n```sql\nSELECT 1\n```\nBetter:\n```sql\nSELECT COUNT(TrackId) FROM Track\n```' },
      ],
      // wrong rows
      [q[2]!.id]: [submit('SELECT Name FROM Genre'), done],
      // malformed: broken tool-call JSON, then a final answer with no query
      [q[3]!.id]: [
        { toolCalls: [{ name: 'submit_sql', arguments: '{"sql": "SELECT COUNT(*' }] },
        { text: 'There are 5 customers in Brazil.' },
      ],
      // the predicted query fails
      [q[4]!.id]: [submit('SELECT Titel FROM Album WHERE AlbumId = 100'), done],
      // the model API fails
      [q[5]!.id]: [{ error: { message: 'upstream overloaded', statusCode: 400 } }],
      // a budget of 2 model calls ends the session before any answer (the loop then asks for a summary)
      [q[6]!.id]: [
        { toolCalls: [{ name: 'sqlite', arguments: { operation: 'list_tables' } }] },
        { toolCalls: [{ name: 'sqlite', arguments: { operation: 'describe', table_name: 'Customer' } }] },
        { text: 'I ran out of turns.' },
      ],
    });
    const events: SqlEvalEvent[] = [];
    const paths = workspace();
    const report = await runSqlEval({
      dataset,
      model: 'gpt-4o-mini',
      createClient: script.createClient,
      ...paths,
      concurrency: 3,
      budgets: { maxTurns: 2 },
      onEvent: (event) => events.push(event),
    });
    for (const client of script.clients) client.assertDone();

    const statuses = Object.fromEntries(report.questions.map((question) => [question.question_id, question.status]));
    expect(statuses).toEqual({
      [q[0]!.id]: 'correct',
      [q[1]!.id]: 'correct',
      [q[2]!.id]: 'incorrect',
      [q[3]!.id]: 'no_answer',
      [q[4]!.id]: 'predicted_error',
      [q[5]!.id]: 'agent_error',
      [q[6]!.id]: 'limit',
    });
    expect(report).toMatchObject({
      dataset: 'chinook',
      model: 'gpt-4o-mini',
      planned: 7,
      complete: true,
      overall: { total: 7, correct: 2, accuracy: 2 / 7 },
      by_difficulty: { simple: { total: 7, correct: 2 } },
    });
    expect(report.statuses).toMatchObject({
      correct: 2,
      incorrect: 1,
      no_answer: 1,
      predicted_error: 1,
      agent_error: 1,
      limit: 1,
      gold_error: 0,
    });
    // usage is the sessions' own: 13 scripted answers of 100 + 20 tokens (the API error has none)
    expect(report.usage.input_tokens).toBe(1300);
    expect(report.usage.output_tokens).toBe(260);
    expect(report.usage.cost_usd).toBeGreaterThan(0);

    const wrong = report.failures.find((failure) => failure.question_id === q[2]!.id)!;
    expect(wrong).toMatchObject({
      status: 'incorrect',
      predicted_sql: 'SELECT Name FROM Genre',
      gold_sql: q[2]!.goldSql,
      detail: expect.stringContaining('25 predicted row(s) vs 5 gold row(s)'),
    });
    expect(readFileSync(wrong.trace_path, 'utf8')).toContain('"type":"run_start"');
    expect(wrong.trace_path).toBe(join(paths.sessionsDir, wrong.session_id, 'trace.jsonl'));
    expect(report.failures.find((failure) => failure.question_id === q[4]!.id)!.detail).toContain(
      'no such column: Titel',
    );
    expect(report.failures.find((failure) => failure.question_id === q[5]!.id)!.detail).toContain(
      'upstream overloaded',
    );

    // the results file has a run line and one line per question, with the answer's source
    const content = readSqlResults(paths.resultsPath);
    expect(content.header).toMatchObject({ type: 'run', dataset: 'chinook', model: 'gpt-4o-mini' });
    expect(content.results.map((result) => [result.question_id, result.answer_source])).toEqual(
      expect.arrayContaining([
        [q[0]!.id, 'submit_sql'],
        [q[1]!.id, 'sql_block'],
        [q[3]!.id, null],
      ]),
    );
    expect(content.results.find((result) => result.question_id === q[1]!.id)!.predicted_sql).toBe(
      'SELECT COUNT(TrackId) FROM Track',
    );

    // progress: a start, one end per question with running accuracy and cost, a final report
    expect(events[0]).toMatchObject({ type: 'eval_start', total: 7, done: 0, concurrency: 3 });
    const ends = events.filter((event) => event.type === 'question_end');
    expect(ends.map((event) => event.done)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(ends.at(-1)).toMatchObject({ correct: 2, accuracy: 2 / 7 });
    expect((ends.at(-1) as { cost_usd: number }).cost_usd).toBeCloseTo(report.usage.cost_usd, 8);
    expect(events.at(-1)).toMatchObject({ type: 'eval_end', interrupted: false });
    expect(events.filter((event) => event.type === 'question_start')).toHaveLength(7);

    const table = formatSqlEvalReport(report);
    expect(table).toContain('overall             7        2     28.6%');
    expect(table).toContain(`- [${q[2]!.id}] simple incorrect: ${q[2]!.question}`);
    expect(table).toContain(`    predicted: SELECT Name FROM Genre`);
    expect(table).toContain(`    session:   ${wrong.session_id} (${wrong.trace_path})`);
  });

  it('gives each question only its own database and the readonly profile', async () => {
    const dataset = firstQuestions(1);
    const script = scripted({
      [dataset.questions[0]!.id]: [
        {
          toolCalls: [
            { name: 'sqlite', arguments: { operation: 'query', sql: "INSERT INTO Artist (Name) VALUES ('x')" } },
          ],
        },
        submit('SELECT COUNT(*) FROM Artist'),
        done,
      ],
    });
    const report = await runSqlEval({
      dataset,
      model: 'gpt-4o-mini',
      createClient: script.createClient,
      ...workspace(),
    });
    expect(report.overall.correct).toBe(1);
    const request = script.clients[0]!.requests[0]!;
    expect(request.tools?.map((tool) => tool.function.name).sort()).toEqual(['sqlite', 'submit_sql']);
    expect(JSON.stringify(request.tools)).toContain('chinook');
    const refusal = script.clients[0]!.requests[1]!.messages.at(-1)!;
    expect(refusal.role).toBe('tool');
    expect(String(refusal.content)).toMatch(/read-only|not allowed|refused/i);
    expect(script.clients[0]!.requests[0]!.messages.at(-1)!.content).toBe(
      `Question: ${dataset.questions[0]!.question}\nHint: ${dataset.questions[0]!.evidence}\nDatabase: chinook (the \`sqlite\` tool, database "chinook")`,
    );
  });

  it('grades a session that outlives its time as agent_timeout, and a predicted query that outlives its time as predicted_timeout', async () => {
    const dataset = firstQuestions(2);
    const [first, second] = dataset.questions;
    const script = scripted({ [first!.id]: [{ hang: true }], [second!.id]: [submit(ENDLESS), done] });
    const report = await runSqlEval({
      dataset,
      model: 'gpt-4o-mini',
      createClient: script.createClient,
      ...workspace(),
      questionTimeoutMs: 1_000,
      queryTimeoutMs: 500,
    });
    expect(report.questions.map((question) => question.status)).toEqual(['agent_timeout', 'predicted_timeout']);
    expect(report.failures[0]).toMatchObject({ predicted_sql: null, detail: 'no answer within 1 s' });
    expect(report.failures[1]).toMatchObject({ predicted_sql: ENDLESS, detail: 'the query ran longer than 0.5 s' });
    expect(
      Object.fromEntries(
        readSqlResults(report.results_path).results.map((result) => [result.question_id, result.run_status]),
      ),
    ).toEqual({ [first!.id]: 'timeout', [second!.id]: 'completed' });
  });

  it('reports a gold query that fails as a dataset problem', async () => {
    const dataset: SqlDataset = {
      ...chinook,
      questions: [{ ...chinook.questions[0]!, goldSql: 'SELECT FROM nowhere' }],
    };
    const script = scripted({ [dataset.questions[0]!.id]: [submit('SELECT 1'), done] });
    const report = await runSqlEval({
      dataset,
      model: 'gpt-4o-mini',
      createClient: script.createClient,
      ...workspace(),
    });
    expect(report.failures[0]).toMatchObject({
      status: 'gold_error',
      detail: expect.stringContaining('a dataset problem'),
    });
  });

  it('resumes after an interruption and a torn last line, running only unfinished questions', async () => {
    const dataset = firstQuestions(5);
    const ids = dataset.questions.map((question) => question.id);
    const right = Object.fromEntries(
      dataset.questions.map((question) => [question.id, [submit(question.goldSql), done]]),
    );
    const paths = workspace();
    const controller = new AbortController();
    const first = scripted(right);
    const partial = await runSqlEval({
      dataset,
      model: 'gpt-4o-mini',
      createClient: first.createClient,
      ...paths,
      concurrency: 1,
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === 'question_end' && event.done === 2) controller.abort();
      },
    });
    expect(partial).toMatchObject({ complete: false, planned: 5, overall: { total: 2, correct: 2 } });
    expect(first.asked).toEqual(ids.slice(0, 2));
    expect(formatSqlEvalReport(partial)).toContain('(incomplete: 2 of 5 questions)');

    // a crash in the middle of writing the third result leaves half a line
    const line = readFileSync(paths.resultsPath, 'utf8').split('\n')[1]!;
    appendFileSync(
      paths.resultsPath,
      line.replace(`"question_id":"${ids[0]}"`, `"question_id":"${ids[2]}"`).slice(0, 80),
    );
    expect(readSqlResults(paths.resultsPath).results).toHaveLength(2);

    const second = scripted(right);
    const events: SqlEvalEvent[] = [];
    const report = await runSqlEval({
      dataset,
      model: 'gpt-4o-mini',
      createClient: second.createClient,
      ...paths,
      resume: true,
      concurrency: 2,
      onEvent: (event) => events.push(event),
    });
    expect(second.asked.sort()).toEqual(ids.slice(2).sort());
    expect(events[0]).toMatchObject({ type: 'eval_start', total: 5, done: 2, correct: 2 });
    expect(report).toMatchObject({ complete: true, overall: { total: 5, correct: 5, accuracy: 1 } });
    expect(report.questions.map((question) => question.question_id)).toEqual(ids);
    // every line of the file is whole again
    const lines = readFileSync(paths.resultsPath, 'utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(6);
    for (const text of lines) expect(() => JSON.parse(text)).not.toThrow();

    // a finished run resumed again does nothing
    const third = scripted(right);
    expect(
      (await runSqlEval({ dataset, model: 'gpt-4o-mini', createClient: third.createClient, ...paths, resume: true }))
        .overall.correct,
    ).toBe(5);
    expect(third.asked).toEqual([]);
  });

  it('runs only the questions of one difficulty, and a resume keeps the filter and the limit', async () => {
    const challenging = chinook.questions.filter((question) => question.difficulty === 'challenging');
    const right = Object.fromEntries(challenging.map((question) => [question.id, [submit(question.goldSql), done]]));
    const paths = workspace();
    const first = scripted(right);
    const controller = new AbortController();
    await runSqlEval({
      dataset: chinook,
      model: 'gpt-4o-mini',
      createClient: first.createClient,
      ...paths,
      difficulty: 'challenging',
      limit: 3,
      concurrency: 1,
      signal: controller.signal,
      onEvent: (event) => event.type === 'question_end' && controller.abort(),
    });
    expect(first.asked).toEqual([challenging[0]!.id]);
    const second = scripted(right);
    const report = await runSqlEval({
      dataset: chinook,
      model: 'gpt-4o-mini',
      createClient: second.createClient,
      ...paths,
      resume: true,
    });
    expect(second.asked.sort()).toEqual([challenging[1]!.id, challenging[2]!.id].sort());
    expect(report).toMatchObject({
      planned: 3,
      complete: true,
      by_difficulty: { challenging: { total: 3, correct: 3 } },
    });
  });

  it("refuses to resume another model's run, or to overwrite a results file", async () => {
    const dataset = firstQuestions(1);
    const paths = workspace();
    const script = scripted({ [dataset.questions[0]!.id]: [submit(dataset.questions[0]!.goldSql), done] });
    await runSqlEval({ dataset, model: 'gpt-4o-mini', createClient: script.createClient, ...paths });
    await expect(
      runSqlEval({ dataset, model: 'gpt-4o', createClient: script.createClient, ...paths, resume: true }),
    ).rejects.toThrow(/is a run of the model 'gpt-4o-mini', not 'gpt-4o'/);
    await expect(
      runSqlEval({ dataset, model: 'gpt-4o-mini', createClient: script.createClient, ...paths }),
    ).rejects.toThrow(/already exists\. Continue it with --resume/);
    expect(existsSync(paths.resultsPath)).toBe(true);
  });

  it("stops with the session store's error when session directories cannot be made", async () => {
    const dataset = firstQuestions(3);
    const paths = workspace();
    writeFileSync(paths.sessionsDir, 'a file where the sessions folder should be');
    const script = scripted({});
    await expect(
      runSqlEval({ dataset, model: 'gpt-4o-mini', createClient: script.createClient, ...paths, concurrency: 2 }),
    ).rejects.toThrow(/sessions/);
    expect(script.asked).toEqual([]);
    expect(readSqlResults(paths.resultsPath).results).toEqual([]);
  });

  it('compares two runs question by question', async () => {
    const dataset = firstQuestions(4);
    const q = dataset.questions;
    const runA = scripted({
      [q[0]!.id]: [submit(q[0]!.goldSql), done],
      [q[1]!.id]: [submit('SELECT 0'), done],
      [q[2]!.id]: [submit(q[2]!.goldSql), done],
      [q[3]!.id]: [{ text: 'no idea' }],
    });
    const runB = scripted({
      [q[0]!.id]: [submit(q[0]!.goldSql), done],
      [q[1]!.id]: [submit(q[1]!.goldSql), done],
      [q[2]!.id]: [submit('SELECT 0'), done],
      [q[3]!.id]: [submit(q[3]!.goldSql), done],
    });
    const a = await runSqlEval({ dataset, model: 'gpt-4o-mini', createClient: runA.createClient, ...workspace() });
    const b = await runSqlEval({ dataset, model: 'gpt-4o-mini', createClient: runB.createClient, ...workspace() });
    // a report rebuilt from the results file equals the one returned
    expect(loadSqlEvalReport(a.results_path)).toEqual(a);
    const comparison = compareSqlEvalReports(a, b);
    expect(comparison.overall).toEqual({ questions: 4, before: 0.5, after: 0.75, delta: 0.25 });
    expect(comparison.fixed.map((flip) => [flip.question_id, flip.before, flip.after])).toEqual([
      [q[1]!.id, 'incorrect', 'correct'],
      [q[3]!.id, 'no_answer', 'correct'],
    ]);
    expect(comparison.broken.map((flip) => [flip.question_id, flip.before, flip.after])).toEqual([
      [q[2]!.id, 'correct', 'incorrect'],
    ]);
    const text = formatSqlEvalComparison(comparison);
    expect(text).toContain('overall             4  50.0%  75.0%           +25.0');
    expect(text).toContain(`fixed in B (2): ${q[1]!.id} (incorrect), ${q[3]!.id} (no_answer)`);
  });
});
