import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { State } from '@rho/core';
import type { ChatMessage } from '@rho/core';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer, RecordedRequest } from '@rho/core/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Kills `rho` with SIGKILL at random moments of a scripted multi-tool task (and, in two more
// suites, in the middle of a compaction and in the middle of a batch of directives), then checks
// that the trace replays, that nothing the process had reported (it reports each record only
// after appending it) is missing from the trace, and that the session resumes and completes.
const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'bin.js');
const RUNS = Number(process.env.RHO_FAULT_RUNS ?? 100);
const COMPACTION_RUNS = Number(process.env.RHO_FAULT_SPECIAL_RUNS ?? 40);
const DIRECTIVE_RUNS = Number(process.env.RHO_FAULT_SPECIAL_RUNS ?? 40);
const CONCURRENCY = 4;

let server: LoopbackServer;
let work: string;

/** Which scripted task the loopback model plays for a request (by the prompt of its session). */
type Scenario = 'tools' | 'compaction' | 'directives';

const FINAL_ANSWER = 'All files inspected; done.';
// A batch large enough to take a while to deliver, so that kills land in its middle.
const DIRECTIVES = 1000;

/**
 * Three tool rounds, then an answer; continues correctly from any resumed history. In the
 * `compaction` scenario every turn reports a context near the window, so the session compacts
 * before each next turn (the summary carries the rounds done, so progress survives it).
 */
async function respond(request: RecordedRequest) {
  const body = request.body as { messages: ChatMessage[]; stream?: boolean };
  const messages = body.messages;
  const scenario: Scenario = messages.some(
    (message) =>
      message.role === 'user' && typeof message.content === 'string' && message.content.includes('[compaction]'),
  )
    ? 'compaction'
    : 'tools';
  const summarised = Math.max(
    0,
    ...messages.flatMap((message) =>
      message.role === 'user' && typeof message.content === 'string'
        ? [...message.content.matchAll(/rounds=(\d+)/g)].map((match) => Number(match[1]))
        : [],
    ),
  );
  const rounds =
    summarised + messages.filter((message) => message.role === 'assistant' && message.tool_calls !== undefined).length;
  const delayMs = 2 + Math.floor(Math.random() * 12);
  const last = messages.at(-1);
  if (typeof last?.content === 'string' && last.content.startsWith('CONTEXT CHECKPOINT COMPACTION')) {
    // A summary takes a moment, so kills land during it (deliberate pacing of the fake server, not a race).
    await new Promise((resolve) => setTimeout(resolve, 5 + Math.floor(Math.random() * 30)));
    return { type: 'response' as const, text: `Progress so far: rounds=${rounds}.` };
  }
  // gpt-5-mini has a 400k window: 390k tokens of context is past the 70 % threshold.
  const usage = scenario === 'compaction' ? { prompt_tokens: 390_000, completion_tokens: 10 } : undefined;
  if (rounds < 3) {
    return {
      type: 'response' as const,
      text: rounds === 1 ? 'Reading both files.' : '',
      toolCalls:
        rounds === 1
          ? [
              { name: 'read', arguments: '{"path": "a.txt"}' },
              { name: 'read', arguments: '{"path": "b.txt"}' },
            ]
          : [{ name: 'list', arguments: '{"path": "."}' }],
      chunkSize: 5,
      delayMs,
      ...(usage === undefined ? {} : { usage }),
    };
  }
  return { type: 'response' as const, text: FINAL_ANSWER, chunkSize: 5, delayMs };
}

interface Running {
  child: ReturnType<typeof spawn>;
  /** Every JSON line printed so far. */
  lines: string[];
}

function run(
  args: string[],
  home: string,
  onLine?: (line: string, running: Running) => void,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; lines: string[]; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, '--json', '--base-url', server.url, ...args], {
      cwd: work,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, RHO_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let buffer = '';
    const lines: string[] = [];
    const running: Running = { child, lines };
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let index = buffer.indexOf('\n');
      while (index !== -1) {
        const line = buffer.slice(0, index);
        lines.push(line);
        buffer = buffer.slice(index + 1);
        index = buffer.indexOf('\n');
        onLine?.(line, running);
      }
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, lines, stderr }));
  });
}

beforeAll(async () => {
  server = await startLoopbackServer({ respond });
  work = mkdtempSync(join(tmpdir(), 'rho-fault-work-'));
  writeFileSync(join(work, 'a.txt'), 'alpha\n'.repeat(50));
  writeFileSync(join(work, 'b.txt'), 'beta\n'.repeat(50));
});

afterAll(async () => {
  await server.close();
});

/** What one scenario does to a run: its prompt, and when to kill it. */
interface KillPlan {
  prompt: string;
  /** Called for every line the first run prints; kills it (SIGKILL) at some moment. */
  onLine: (line: string, running: Running, home: string) => void;
  /** Whether the kill landed in the moment this scenario is about (from the trace as killed). */
  landed: (trace: string) => boolean;
  /** Extra checks of the final, completed session. */
  check?: (final: State, trace: string) => void;
}

/**
 * Runs `runs` sessions `CONCURRENCY` at a time: each is killed by `plan`, then the trace must
 * replay, hold everything the process reported (it reports each record only after appending it),
 * and resume to completion with a valid history.
 */
async function killSuite(
  runs: number,
  plan: (index: number) => KillPlan,
): Promise<{ killedMidRun: number; landed: number }> {
  let killedMidRun = 0;
  let landed = 0;
  let sessionsChecked = 0;
  const one = async (index: number) => {
    const home = mkdtempSync(join(tmpdir(), 'rho-fault-home-'));
    const { prompt, onLine, landed: landedIn, check } = plan(index);
    const killed = await run([prompt], home, (line, running) => onLine(line, running, home));
    const sessionsDir = join(home, 'sessions');
    const ids = existsSync(sessionsDir) ? readdirSync(sessionsDir) : [];
    expect(ids).toHaveLength(1);
    const directory = join(sessionsDir, ids[0]!);
    if (killed.signal === 'SIGKILL') killedMidRun += 1;

    const tracePath = join(directory, 'trace.jsonl');
    const trace = existsSync(tracePath) ? readFileSync(tracePath, 'utf8') : '';
    if (killed.signal === 'SIGKILL' && landedIn(trace)) landed += 1;
    const state = State.fromJsonl(trace);
    expect(state.replay!.skippedLines).toEqual([]);
    // Everything the process reported had been appended first, in the same order.
    const reported = killed.lines
      .map((line) => asTraced(JSON.parse(line) as { type: string }))
      .filter((event) => event.type !== 'text' && event.type !== 'reasoning');
    const written = trace
      .split('\n')
      .filter((line) => line.trim() !== '')
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as { type: string }];
        } catch {
          return [];
        }
      });
    expect(written.slice(0, reported.length)).toEqual(reported);

    // The lock of the killed process is stale (its pid is gone) and is taken over.
    const resumed = await run(['-r', ids[0]!, 'Continue and finish.'], home);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(existsSync(join(directory, 'lock'))).toBe(false);
    const finalTrace = readFileSync(tracePath, 'utf8');
    const final = State.fromJsonl(finalTrace);
    expect(final.status).toBe('completed');
    // A SIGKILL can cut a record in the middle of its write(2) when the record crosses a page of the
    // file (Linux stops copying at a page boundary once a fatal signal is pending). That record was never
    // reported; replay ignored it as the torn last line, and the resumed writer started a new line
    // after it, so it is the one line the final trace may skip, and only where the kill left it.
    const tornLine = state.replay!.tornLastLine ? trace.split('\n').length : undefined;
    expect(final.replay!.skippedLines).toEqual(tornLine === undefined ? [] : [tornLine]);
    expect(final.replay!.invalidRecords).toEqual([]);
    const answered = new Set(
      final.messages.flatMap((message) => (message.role === 'tool' ? [message.tool_call_id] : [])),
    );
    for (const message of final.messages) {
      if (message.role === 'assistant')
        for (const call of message.tool_calls ?? []) expect(answered.has(call.id)).toBe(true);
    }
    expect(final.messages.at(-1)).toEqual({ role: 'assistant', content: FINAL_ANSWER });
    check?.(final, finalTrace);
    sessionsChecked += 1;
  };
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < runs) {
        const index = next;
        next += 1;
        await one(index);
      }
    }),
  );
  expect(sessionsChecked).toBe(runs);
  return { killedMidRun, landed };
}

/** Kills once, `delay` ms after `when` first holds for a printed line. */
function killWhen(when: (event: { type: string; purpose?: string }, running: Running) => boolean, delay: () => number) {
  let armed = true;
  return (line: string, running: Running) => {
    if (!armed) return;
    let event: { type: string; purpose?: string };
    try {
      event = JSON.parse(line) as { type: string; purpose?: string };
    } catch {
      return;
    }
    if (!when(event, running)) return;
    armed = false;
    const wait = delay();
    if (wait <= 0) running.child.kill('SIGKILL');
    // A random kill point on purpose: every point must leave a consistent session, so no timing is wrong.
    else setTimeout(() => running.child.kill('SIGKILL'), wait);
  };
}

function records(trace: string): { type: string; purpose?: string; text?: string }[] {
  return trace.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as { type: string; purpose?: string; text?: string }];
    } catch {
      return [];
    }
  });
}

describe('SIGKILL at random moments', () => {
  it(`never loses an appended event and always resumes (${RUNS} runs)`, { timeout: 600_000 }, async () => {
    const { killedMidRun } = await killSuite(RUNS, (index) => ({
      prompt: `Inspect the files (run ${index}).`,
      // Kill somewhere between just after start-up and the end of a typical run.
      onLine: killWhen(
        () => true,
        () => Math.random() * 160,
      ),
      landed: () => true,
    }));
    // Most kills land mid-run (some runs finish before their kill): the test is not vacuous.
    expect(killedMidRun).toBeGreaterThan(RUNS / 2);
  });

  it(`during compaction (${COMPACTION_RUNS} runs)`, { timeout: 600_000 }, async () => {
    const { killedMidRun, landed } = await killSuite(COMPACTION_RUNS, (index) => ({
      prompt: `[compaction] Inspect the files (run ${index}).`,
      // Kill while the summary is being written: after its llm_start, before or as it ends.
      onLine: killWhen(
        (event) => event.type === 'llm_start' && event.purpose === 'compaction',
        () => Math.random() * 25,
      ),
      landed: (trace) => {
        const calls = records(trace).filter(
          (record) => record.type === 'llm_start' || record.type === 'llm_end' || record.type === 'compact',
        );
        return calls.at(-1)?.type === 'llm_start' && calls.at(-1)?.purpose === 'compaction';
      },
      check: (_final, trace) => {
        expect(records(trace).some((record) => record.type === 'compact')).toBe(true);
      },
    }));
    expect(killedMidRun).toBeGreaterThan(COMPACTION_RUNS / 2);
    // Most kills land inside the compaction call itself.
    expect(landed).toBeGreaterThan(COMPACTION_RUNS / 3);
  });

  it(
    `during directive delivery (${DIRECTIVE_RUNS} runs): each directive is delivered exactly once`,
    { timeout: 600_000 },
    async () => {
      const expected = Array.from({ length: DIRECTIVES }, (_, index) => `directive ${index}`);
      const { killedMidRun, landed } = await killSuite(DIRECTIVE_RUNS, (index) => {
        let queued = false;
        const killAt = 1 + Math.floor(Math.random() * 100);
        let seen = 0;
        const kill = killWhen(
          (event) => event.type === 'directive' && (seen += 1) >= killAt,
          () => 0,
        );
        return {
          prompt: `Inspect the files (run ${index}).`,
          onLine: (line, running, home) => {
            if (!queued) {
              // The session directory exists once the run has started: queue a batch of directives.
              queued = true;
              const [id] = readdirSync(join(home, 'sessions'));
              appendFileSync(
                join(home, 'sessions', id!, 'directives.jsonl'),
                expected.map((text) => `${JSON.stringify({ text })}\n`).join(''),
              );
            }
            kill(line, running);
          },
          landed: (trace) => {
            const delivered = records(trace).filter((record) => record.type === 'directive').length;
            return delivered > 0 && delivered < DIRECTIVES;
          },
          check: (final) => {
            const delivered = final.messages.flatMap((message) =>
              message.role === 'user' && message.content.startsWith('[Operator directive] ')
                ? [message.content.slice('[Operator directive] '.length)]
                : [],
            );
            expect(delivered).toEqual(expected);
          },
        };
      });
      expect(killedMidRun).toBeGreaterThan(DIRECTIVE_RUNS / 2);
      // Most kills land in the middle of the batch.
      expect(landed).toBeGreaterThan(DIRECTIVE_RUNS / 3);
    },
  );
});

/** A --json event as the trace holds it: --json's run_start also names the session and its working directory. */
function asTraced(event: { type: string }): { type: string } {
  if (event.type !== 'run_start') return event;
  const {
    session_id: _id,
    working_dir: _dir,
    ...traced
  } = event as { type: string; session_id?: string; working_dir?: string };
  return traced;
}
