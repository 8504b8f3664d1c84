import { existsSync, mkdtempSync, readdirSync, readFileSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateAtifTrajectory } from '@rho/core/atif';
import type { LoopbackServer, LoopbackStep, RecordedRequest } from '@rho/core/testing';
import { startLoopbackServer } from '@rho/core/testing';
import type { SqlEvalReport } from '@rho/eval';
import { loadSqlDataset } from '@rho/eval';
import { afterEach, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

const chinook = loadSqlDataset('chinook');
const byQuestion = new Map(chinook.questions.map((question) => [question.question, question]));

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The dataset question a request is about (from its first user message). */
function questionOf(request: RecordedRequest) {
  const first = (request.body.messages as { role: string; content: string }[]).find(
    (message) => message.role === 'user',
  )!;
  const text = /^Question: (.*)$/m.exec(first.content)![1]!;
  return byQuestion.get(text)!;
}

/**
 * A model that submits the gold query (or a wrong one for the ids in `wrong`) with submit_sql,
 * then answers in one line; `hang` questions never get an answer.
 */
function model(options: { wrong?: Set<string>; hang?: Set<string> } = {}) {
  return (request: RecordedRequest): LoopbackStep => {
    const question = questionOf(request);
    if (options.hang?.has(question.id)) return { type: 'hang' };
    const last = (request.body.messages as { role: string }[]).at(-1)!;
    if (last.role === 'tool')
      return { type: 'response', text: 'Submitted.', usage: { prompt_tokens: 900, completion_tokens: 10 } };
    const sql = options.wrong?.has(question.id) ? 'SELECT 1' : question.goldSql;
    return {
      type: 'response',
      toolCalls: [{ name: 'submit_sql', arguments: JSON.stringify({ sql }) }],
      usage: { prompt_tokens: 800, completion_tokens: 40 },
    };
  };
}

function home(): { home: string; env: NodeJS.ProcessEnv; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'rho-eval-cli-'));
  return { home: join(dir, 'home'), dir, env: { RHO_HOME: join(dir, 'home'), OPENAI_API_KEY: 'test-key' } };
}

describe('rho eval sql (built binary, loopback model)', () => {
  it('runs the whole bundled chinook set and reports accuracy, cost and failures', async () => {
    const wrong = new Set(chinook.questions.filter((_, index) => index % 8 === 3).map((question) => question.id));
    server = await startLoopbackServer({ respond: model({ wrong }) });
    const { env, dir, home: rhoHome } = home();
    const output = join(dir, 'run.jsonl');
    const outcome = await runRho(
      ['eval', 'sql', '--dataset', 'chinook', '--base-url', server.url, '--model', 'gpt-4o-mini', '--output', output],
      { env },
    );
    expect(outcome.stderr).not.toContain('rho:');
    expect(outcome.code).toBe(0);
    const total = chinook.questions.length;
    const correct = total - wrong.size;
    // plain progress lines when stderr is not a terminal
    expect(outcome.stderr).toContain(`rho eval sql: ${total} questions, 4 at a time; results in ${output}`);
    expect(outcome.stderr).toContain(`[${total}/${total}] `);
    expect(outcome.stdout).toContain('rho eval sql: chinook with gpt-4o-mini');
    expect(outcome.stdout).toMatch(
      new RegExp(`overall\\s+${total}\\s+${correct}\\s+${((correct / total) * 100).toFixed(1)}%`),
    );
    expect(outcome.stdout).toContain(`failures (${wrong.size}):`);
    expect(outcome.stdout).toContain('    predicted: SELECT 1');

    const report = JSON.parse(readFileSync(join(dir, 'run.report.json'), 'utf8')) as SqlEvalReport;
    expect(report).toMatchObject({
      dataset: 'chinook',
      model: 'gpt-4o-mini',
      planned: total,
      complete: true,
      overall: { total, correct },
    });
    expect(report.usage).toMatchObject({ input_tokens: total * 1700, output_tokens: total * 50 });
    expect(report.usage.cost_usd).toBeGreaterThan(0);
    expect(Object.keys(report.by_difficulty)).toEqual(['simple', 'moderate', 'challenging']);
    expect(readFileSync(output, 'utf8').trimEnd().split('\n')).toHaveLength(total + 1);
    expect(readdirSync(join(rhoHome, 'sessions'))).toHaveLength(total);

    // a failure's session exports as a valid ATIF trajectory
    const failure = report.failures[0]!;
    expect(existsSync(failure.trace_path)).toBe(true);
    const exported = await runRho(['export', failure.session_id], { env });
    expect(exported.code).toBe(0);
    expect(validateAtifTrajectory(JSON.parse(exported.stdout))).toEqual([]);
  });

  it('resumes a run killed mid-way without rerunning finished questions', async () => {
    const hang = new Set([chinook.questions[3]!.id]);
    server = await startLoopbackServer({ respond: model({ hang }) });
    const { env, dir } = home();
    const output = join(dir, 'run.jsonl');
    let killed = false;
    const first = await runRho(
      [
        'eval',
        'sql',
        '--dataset',
        'chinook',
        '--limit',
        '6',
        '--concurrency',
        '1',
        '--base-url',
        server.url,
        '--output',
        output,
      ],
      {
        env,
        onSpawn: (child) => {
          // The 4th question hangs: once the first three are written, the process is killed as a crash would.
          const check = () => {
            const lines = existsSync(output)
              ? readFileSync(output, 'utf8')
                  .split('\n')
                  .filter((line) => line.trim() !== '')
              : [];
            if (lines.length === 4 && !killed) {
              killed = true;
              watcher.close();
              child.kill('SIGKILL');
            }
          };
          const watcher = watch(dir, check);
          check();
        },
      },
    );
    expect(killed).toBe(true);
    expect(first.code).toBe(null);
    await server.close();

    server = await startLoopbackServer({ respond: model() });
    const resumed = await runRho(['eval', 'sql', '--resume', output, '--base-url', server.url], { env });
    expect(resumed.stderr).toContain('rho eval sql: 6 questions (3 already done)');
    expect(resumed.code).toBe(0);
    const asked = new Set(server.requests.map((request) => questionOf(request).id));
    expect([...asked].sort()).toEqual(
      chinook.questions
        .slice(3, 6)
        .map((question) => question.id)
        .sort(),
    );
    const report = JSON.parse(readFileSync(join(dir, 'run.report.json'), 'utf8')) as SqlEvalReport;
    expect(report).toMatchObject({ complete: true, planned: 6, overall: { total: 6, correct: 6 } });
  });

  it('stops on Ctrl+C with exit 130 and a resume hint, keeping what finished', async () => {
    server = await startLoopbackServer({ respond: model({ hang: new Set([chinook.questions[2]!.id]) }) });
    const { env, dir } = home();
    const output = join(dir, 'run.jsonl');
    const interrupted = await runRho(
      [
        'eval',
        'sql',
        '--dataset',
        'chinook',
        '--limit',
        '4',
        '--concurrency',
        '1',
        '--base-url',
        server.url,
        '--output',
        output,
      ],
      {
        env,
        onSpawn: (child) => {
          // Once two questions are written the third hangs in its model call: interrupt then.
          let sent = false;
          const check = () => {
            const lines = existsSync(output)
              ? readFileSync(output, 'utf8')
                  .split('\n')
                  .filter((line) => line.trim() !== '')
              : [];
            if (lines.length === 3 && !sent) {
              sent = true;
              watcher.close();
              child.kill('SIGINT');
            }
          };
          const watcher = watch(dir, check);
          check();
        },
      },
    );
    expect(interrupted.code).toBe(130);
    expect(interrupted.stderr).toContain(
      `Interrupted after 2 of 4 questions. Continue with: rho eval sql --resume ${output}`,
    );
    expect(interrupted.stdout).toContain('(incomplete: 2 of 4 questions)');
    expect(readFileSync(output, 'utf8').trimEnd().split('\n')).toHaveLength(3);
  });

  it('exits 1 when every question failed in its session (a wrong key), keeping the run resumable', async () => {
    server = await startLoopbackServer({
      respond: () => ({ type: 'http_error', status: 401, message: 'Incorrect API key provided' }),
    });
    const { env, dir } = home();
    const output = join(dir, 'run.jsonl');
    const outcome = await runRho(
      ['eval', 'sql', '--dataset', 'chinook', '--limit', '2', '--base-url', server.url, '--output', output],
      { env },
    );
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain('every question failed in its session');
    expect(outcome.stderr).toContain('Incorrect API key provided');
    expect(outcome.stdout).toContain('outcomes: agent_error 2');
    await server.close();

    // with the key fixed, a resume runs the failed questions again
    server = await startLoopbackServer({ respond: model() });
    const resumed = await runRho(['eval', 'sql', '--resume', output, '--base-url', server.url], { env });
    expect(resumed.code).toBe(0);
    expect(resumed.stderr).toContain('rho eval sql: 2 questions, 4 at a time');
    expect(resumed.stdout).toContain('outcomes: correct 2');
  });

  it('prints progress events as JSON lines with --json, and compares two runs', async () => {
    server = await startLoopbackServer({ respond: model({ wrong: new Set([chinook.questions[1]!.id]) }) });
    const { env, dir } = home();
    const a = join(dir, 'a.jsonl');
    const json = await runRho(
      ['eval', 'sql', '--dataset', 'chinook', '--limit', '3', '--base-url', server.url, '--output', a, '--json'],
      { env },
    );
    expect(json.code).toBe(0);
    const events = json.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; report?: SqlEvalReport });
    expect(events[0]!.type).toBe('eval_start');
    expect(events.filter((event) => event.type === 'question_end')).toHaveLength(3);
    expect(events.at(-1)).toMatchObject({ type: 'eval_end', report: { overall: { total: 3, correct: 2 } } });
    await server.close();

    server = await startLoopbackServer({ respond: model({ wrong: new Set([chinook.questions[2]!.id]) }) });
    const b = join(dir, 'b.jsonl');
    expect(
      (
        await runRho(['eval', 'sql', '--dataset', 'chinook', '--limit', '3', '--base-url', server.url, '--output', b], {
          env,
        })
      ).code,
    ).toBe(0);
    const compared = await runRho(['eval', 'sql', '--compare', join(dir, 'a.report.json'), b], { env });
    expect(compared.code).toBe(0);
    expect(compared.stdout).toContain(`fixed in B (1): ${chinook.questions[1]!.id} (incorrect)`);
    expect(compared.stdout).toContain(`broken in B (1): ${chinook.questions[2]!.id} (incorrect)`);
    expect(compared.stdout).toMatch(/overall\s+3\s+66\.7%\s+66\.7%\s+\+0\.0/);
  });

  it('exits 2 with a message for bad input, before any model call', async () => {
    server = await startLoopbackServer({ respond: model() });
    const { env, dir } = home();
    const taken = join(dir, 'taken.jsonl');
    writeFileSync(taken, '');
    const cases: [string[], RegExp][] = [
      [['eval', 'sql'], /Missing --dataset/],
      [['eval', 'sql', '--dataset', join(dir, 'nowhere')], /Dataset not found/],
      [['eval', 'sql', '--dataset', 'chinook', '--limit', '0'], /--limit must be a positive whole number/],
      [['eval', 'sql', '--dataset', 'chinook', '--output', taken], /already exists\. Continue it with --resume/],
      [['eval', 'sql', '--resume', taken], /not a results file written by rho eval sql/],
      [['eval', 'sql', '--compare', taken], /--compare takes two runs/],
      [['eval', 'sql', '--compare', join(dir, 'x.json'), join(dir, 'y.json')], /Report not found/],
    ];
    for (const [args, message] of cases) {
      const outcome = await runRho([...args, '--base-url', server.url], { env });
      expect(outcome.code, args.join(' ')).toBe(2);
      expect(outcome.stderr, args.join(' ')).toMatch(message);
    }
    const noKey = await runRho(['eval', 'sql', '--dataset', 'chinook'], { env: { RHO_HOME: join(dir, 'home') } });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('Missing API key');
    expect(server.requests).toHaveLength(0);
  });
});
