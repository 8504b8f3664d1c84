// Issue 33's ownership findings, with real `rho worker` processes on the shared PostgreSQL: a
// worker paused longer than its lease (SIGSTOP stands in for a GC pause, a debugger, a frozen VM)
// while its `rho` child kept running let the child make 23 more tool calls beside attempt 2 on
// another node, and attempt 1's late result was accepted. Pausing the worker and its child
// together still let the stale child make one more call. Now the child stops itself when the
// lease lapses (it watches the lease file the worker renews), the late completion is fenced to
// its attempt, and the result is the live attempt's.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer, RecordedRequest } from '@rho/core/testing';
import { probePostgres } from '@rho/fleet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchemas, killWorkers, POSTGRES_URL, startWorker as startQueueWorker, waitFor } from './support/queue.js';
import type { WorkerProcess } from './support/queue.js';
import { runRho } from './support/run-rho.js';

const { available } = await probePostgres(POSTGRES_URL);
const schema = `rho_queue_fence_${randomBytes(5).toString('hex')}`;

interface Task {
  id: string;
  state: string;
  attempt: number;
  host?: string;
  session_id?: string;
  result?: { status: string; answer?: string; attempt?: number };
}

type Record_ = { type: string; ts: string; status?: string };

function trace(home: string, sessionId: string): Record_[] {
  return readFileSync(join(home, 'sessions', sessionId, 'trace.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record_);
}

describe.skipIf(!available)('one owner per task attempt', { timeout: 240_000 }, () => {
  let server: LoopbackServer;
  /** Tasks whose loop the test ended: their next model call answers with text. */
  const finished = new Set<string>();
  const workers: WorkerProcess[] = [];
  const env = () => ({
    RHO_FLEET_URL: POSTGRES_URL,
    RHO_QUEUE_SCHEMA: schema,
    RHO_QUEUE_LEASE: '10',
    OPENAI_BASE_URL: server.url,
    OPENAI_API_KEY: 'test',
    OPENAI_MODEL: 'scripted',
    RHO_HOME: mkdtempSync(join(tmpdir(), 'rho-fence-client-')),
  });
  const rho = async (...args: string[]) => runRho(args, { env: env() });
  const task = async (id: string): Promise<Task> => {
    const outcome = await rho('tasks', '--json', id);
    expect(outcome.code, outcome.stderr).toBe(0);
    return (JSON.parse(outcome.stdout) as Task[])[0]!;
  };
  const submit = async (...args: string[]): Promise<string> => {
    const outcome = await rho('submit', '--json', ...args);
    expect(outcome.code, outcome.stderr).toBe(0);
    return (JSON.parse(outcome.stdout) as string[])[0]!;
  };
  const startWorker = async (host: string, label: string) => {
    const worker = await startQueueWorker({ host, args: ['--labels', label], env: env() });
    workers.push(worker);
    return worker;
  };
  const toolCallsOf = (key: string) =>
    server.requests.filter((request) => JSON.stringify(request.body?.messages ?? []).includes(`loop ${key}`)).length;

  beforeAll(async () => {
    // "loop KEY" calls the list tool again and again (a model at work) until the test ends it.
    server = await startLoopbackServer({
      respond: async (request: RecordedRequest) => {
        const messages = (request.body?.messages ?? []) as { role: string; content: string }[];
        const prompt = messages.find((message) => message.role === 'user')?.content ?? '';
        const key = /^loop (\S+)/.exec(prompt)?.[1];
        if (key === undefined || finished.has(key)) return { type: 'response', text: `answer: ${prompt}` };
        return { type: 'response', toolCalls: [{ name: 'list', arguments: '{"path":"."}' }], delayMs: 50 };
      },
    });
  });

  afterAll(async () => {
    killWorkers(workers);
    await server?.close();
    if (available) await dropSchemas(schema);
  });

  for (const how of ['the worker alone', 'the worker and its child together'] as const) {
    it(`${how} paused past the lease: no tool call of attempt 1 after attempt 2 starts, attempt 2's result wins`, async () => {
      const key = how === 'the worker alone' ? 'alone' : 'together';
      const label = `fence-${key}`;
      const a = await startWorker(`node-${key}-a`, label);
      const id = await submit('--label', label, `loop ${key}`);
      const first = await waitFor(async () => {
        const item = await task(id);
        return item.state === 'running' && item.session_id !== undefined ? item : undefined;
      }, 'attempt 1 running');
      await waitFor(() => toolCallsOf(key) >= 3, 'attempt 1 at work');
      // The freeze: the worker alone (its child runs on), or its whole process group.
      if (how === 'the worker alone') process.kill(a.child.pid!, 'SIGSTOP');
      else process.kill(-a.child.pid!, 'SIGSTOP');
      const b = await startWorker(`node-${key}-b`, label);
      const second = await waitFor(async () => {
        const item = await task(id);
        return item.attempt === 2 && item.state === 'running' && item.session_id !== undefined ? item : undefined;
      }, 'attempt 2 running on the other node');
      expect(second.host).toBe(b.host);
      await waitFor(() => {
        try {
          return trace(b.home, second.session_id!).some((record) => record.type === 'tool_start');
        } catch {
          return false;
        }
      }, 'attempt 2 at work');
      // The frozen node wakes up while attempt 2 runs.
      if (how === 'the worker alone') process.kill(a.child.pid!, 'SIGCONT');
      else process.kill(-a.child.pid!, 'SIGCONT');
      // Attempt 1's session ends (it stopped itself, or its worker stopped it once awake).
      const firstEnd = await waitFor(() => {
        const records = trace(a.home, first.session_id!);
        return records.find((record) => record.type === 'run_end');
      }, 'attempt 1 to end');
      expect(firstEnd.status).toBe('cancelled');
      finished.add(key);
      const done = await waitFor(async () => {
        const item = await task(id);
        return item.state === 'done' ? item : undefined;
      }, 'done');
      expect(done).toMatchObject({ attempt: 2, host: b.host, result: { attempt: 2, answer: `answer: loop ${key}` } });

      // No tool call of attempt 1 began after attempt 2's session started.
      const secondStart = Date.parse(trace(b.home, second.session_id!)[0]!.ts);
      const lateCalls = trace(a.home, first.session_id!).filter(
        (record) => record.type === 'tool_start' && Date.parse(record.ts) >= secondStart,
      );
      expect(lateCalls).toEqual([]);
      // The first worker never reported the task finished: its late completion was fenced off.
      const finishedByA = a.log.filter((line) => line.includes('"task_finished"') && line.includes(id));
      expect(finishedByA).toEqual([]);
      const results = await rho('results', '--json', '--wait', id);
      expect(results.code).toBe(0);
      expect(JSON.parse(results.stdout.trim())).toMatchObject({ id, state: 'done', attempt: 2 });
      expect(readdirSync(join(a.home, 'sessions'))).toHaveLength(1);
    });
  }
});
