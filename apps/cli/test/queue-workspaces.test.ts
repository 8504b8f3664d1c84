// Issue 37 on the task queue, with real `rho worker` processes on the shared PostgreSQL: a task
// whose profile may write runs in an isolated workspace of its own on the worker (a git worktree on
// rho/<session>, or a copy of a plain directory), its result says what changed and where, and
// `rho diff` on the worker shows it; `in-place` under a writing profile is refused unless the
// worker allows it; a worker killed mid-task leaks no worktree: the attempt's workspace is
// discarded by the next worker's sweep, and the retry's is the one left for review; a draining
// worker that hands its task back discards the attempt's workspace itself.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer, RecordedRequest } from '@rho/core/testing';
import { probePostgres } from '@rho/fleet/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchemas, killWorkers, POSTGRES_URL, startWorker, waitFor } from './support/queue.js';
import type { WorkerProcess } from './support/queue.js';
import { runRho } from './support/run-rho.js';

const { available } = await probePostgres(POSTGRES_URL);
const schema = `rho_queue_ws_${randomBytes(5).toString('hex')}`;

interface Task {
  id: string;
  state: string;
  attempt: number;
  session_id?: string;
  result?: {
    status: string;
    error?: string;
    host?: string;
    session_id?: string;
    attempt?: number;
    workspace?: { mode: string; kind?: string; branch?: string; path?: string; changes?: Record<string, number> };
  };
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' });

describe.skipIf(!available)('queued tasks in isolated workspaces', { timeout: 240_000 }, () => {
  let server: LoopbackServer;
  /** Keys whose loop the test ended: after its write, the model answers. */
  const finished = new Set<string>();
  const workers: WorkerProcess[] = [];
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-queue-ws-')));
  const repo = join(root, 'repo');
  const plain = join(root, 'plain');
  // Tasks are submitted with a lease of 10 s: a killed worker's task is retried soon.
  const client = {
    RHO_FLEET_URL: POSTGRES_URL,
    RHO_QUEUE_SCHEMA: schema,
    RHO_QUEUE_LEASE: '10',
    RHO_HOME: join(root, 'client-home'),
  };
  const workerEnv = (): NodeJS.ProcessEnv => ({
    RHO_FLEET_URL: POSTGRES_URL,
    RHO_QUEUE_SCHEMA: schema,
    RHO_QUEUE_LEASE: '10',
    OPENAI_BASE_URL: server.url,
    OPENAI_API_KEY: 'test',
    OPENAI_MODEL: 'scripted',
  });
  const start = async (host: string, label: string, home?: string, ...args: string[]) => {
    // rho's home where it is by default, under .config: the workspaces are inside it.
    const own = home ?? join(mkdtempSync(join(root, `${host}-`)), '.config', 'rho');
    mkdirSync(own, { recursive: true });
    const worker = await startWorker({
      host,
      args: ['--labels', label, '--allow-profile', 'developer,readonly', '--allow-dir', root, ...args],
      env: workerEnv(),
      cwd: repo,
      home: own,
    });
    workers.push(worker);
    return worker;
  };
  const submit = async (task: object): Promise<string> => {
    const file = join(root, `tasks-${randomBytes(3).toString('hex')}.jsonl`);
    writeFileSync(file, `${JSON.stringify(task)}\n`);
    const outcome = await runRho(['submit', '--json', '--file', file], { env: client });
    expect(outcome.code, outcome.stderr).toBe(0);
    return (JSON.parse(outcome.stdout) as string[])[0]!;
  };
  const task = async (id: string): Promise<Task> => {
    const outcome = await runRho(['tasks', '--json', id], { env: client });
    expect(outcome.code, outcome.stderr).toBe(0);
    return (JSON.parse(outcome.stdout) as Task[])[0]!;
  };
  const final = (id: string) =>
    waitFor(async () => {
      const item = await task(id);
      return item.state !== 'queued' && item.state !== 'running' ? item : undefined;
    }, `task ${id} final`);
  const worktrees = () =>
    git(repo, 'worktree', 'list', '--porcelain')
      .split('\n')
      .filter((line) => line.startsWith('worktree ')).length;
  const branches = () =>
    git(repo, 'branch', '--list', 'rho/*', '--format=%(refname:short)').split('\n').filter(Boolean);

  beforeAll(async () => {
    mkdirSync(repo);
    writeFileSync(join(repo, 'README.md'), 'a repository\n');
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'init');
    mkdirSync(plain);
    writeFileSync(join(plain, 'data.txt'), 'plain\n');
    // "write KEY": the agent writes KEY.txt (two lines), then lists the folder until the test ends
    // KEY's loop ("loop" in the prompt), or answers at once.
    server = await startLoopbackServer({
      respond: async (request: RecordedRequest) => {
        const messages = (request.body?.messages ?? []) as { role: string; content: string }[];
        const prompt = messages.find((message) => message.role === 'user')?.content ?? '';
        const key = /^(?:write|loop) (\S+)/.exec(prompt)?.[1];
        if (key === undefined) return { type: 'response', text: `answer: ${prompt}` };
        if (!messages.some((message) => message.role === 'tool'))
          return {
            type: 'response',
            toolCalls: [
              { name: 'write', arguments: JSON.stringify({ path: `${key}.txt`, content: 'hello\nworld\n' }) },
            ],
          };
        if (prompt.startsWith('write') || finished.has(key)) return { type: 'response', text: `wrote ${key}` };
        return { type: 'response', toolCalls: [{ name: 'list', arguments: '{"path":"."}' }], delayMs: 50 };
      },
    });
  });

  afterAll(async () => {
    killWorkers(workers);
    await server?.close();
    if (available) await dropSchemas(schema);
  });

  it('a developer task in a repository works on a branch of its own: the checkout is unchanged, the result names the change', async () => {
    const worker = await start('node-repo', 'ws-repo');
    const id = await submit({ prompt: 'write repo', profile: 'developer', working_dir: repo, labels: ['ws-repo'] });
    const done = await final(id);
    expect(done.state, JSON.stringify(done.result)).toBe('done');
    const session = done.result!.session_id!;
    expect(done.result!.workspace).toEqual({
      mode: 'isolated',
      kind: 'git-worktree',
      branch: `rho/${session}`,
      path: join(worker.home, 'workspaces', session),
      changes: { files: 1, additions: 2, deletions: 0 },
    });
    // Nothing of the user's checkout changed; the file is in the workspace.
    expect(existsSync(join(repo, 'repo.txt'))).toBe(false);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    expect(readFileSync(join(worker.home, 'workspaces', session, 'repo.txt'), 'utf8')).toBe('hello\nworld\n');
    const listed = await runRho(['tasks', id], { env: client });
    expect(listed.stdout).toContain(
      `${id.slice(0, 8)}: 1 file changed, +2/-0 on rho/${session} (host node-repo): rho diff ${session}`,
    );
    const results = await runRho(['results', id], { env: client });
    expect(results.stdout).toContain(`on rho/${session} (host node-repo): rho diff ${session}`);
    const diff = await runRho(['diff', session], { env: { RHO_HOME: worker.home }, cwd: repo });
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain('+hello');
    expect(diff.stdout).toContain('repo.txt');
  });

  it('a developer task in a plain directory works on a copy; a readonly one runs in place', async () => {
    const worker = await start('node-plain', 'ws-plain');
    const id = await submit({ prompt: 'write plain', profile: 'developer', working_dir: plain, labels: ['ws-plain'] });
    const done = await final(id);
    expect(done.state, JSON.stringify(done.result)).toBe('done');
    const session = done.result!.session_id!;
    expect(done.result!.workspace).toMatchObject({
      mode: 'isolated',
      kind: 'copy',
      changes: { files: 1, additions: 2 },
    });
    expect(done.result!.workspace!.branch).toBeUndefined();
    expect(existsSync(join(plain, 'plain.txt'))).toBe(false);
    const diff = await runRho(['diff', session], { env: { RHO_HOME: worker.home }, cwd: plain });
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain('+world');
    const listed = await runRho(['tasks', id], { env: client });
    expect(listed.stdout).toContain(`1 file changed, +2/-0 on a copy (host node-plain): rho diff ${session}`);

    const read = await final(
      await submit({ prompt: 'look around', profile: 'readonly', working_dir: plain, labels: ['ws-plain'] }),
    );
    expect(read.state, JSON.stringify(read.result)).toBe('done');
    expect(read.result!.workspace).toEqual({ mode: 'in-place' });
  });

  it('in-place under a writing profile is refused with the flag that allows it; --allow-in-place runs it in place', async () => {
    await start('node-strict', 'ws-strict');
    const spec = { prompt: 'write strict', profile: 'developer', working_dir: plain, workspace: 'in-place' };
    const refused = await final(await submit({ ...spec, labels: ['ws-strict'] }));
    expect(refused).toMatchObject({ state: 'failed', result: { status: 'refused' } });
    expect(refused.result!.error).toContain('workspace in-place is not allowed on this worker');
    expect(refused.result!.error).toContain('start the worker with --allow-in-place to allow it');
    expect(existsSync(join(plain, 'strict.txt'))).toBe(false);

    await start('node-lenient', 'ws-lenient', undefined, '--allow-in-place');
    const ran = await final(await submit({ ...spec, labels: ['ws-lenient'] }));
    expect(ran.state, JSON.stringify(ran.result)).toBe('done');
    expect(ran.result!.workspace).toEqual({ mode: 'in-place' });
    expect(readFileSync(join(plain, 'strict.txt'), 'utf8')).toBe('hello\nworld\n');
  });

  it('a worker SIGKILLed mid-task leaks no worktree: the restarted worker discards attempt 1’s, attempt 2’s stays for review', async () => {
    const before = worktrees();
    const branchesBefore = branches();
    const first = await start('node-kill', 'ws-kill');
    const id = await submit({ prompt: 'loop kill', profile: 'developer', working_dir: repo, labels: ['ws-kill'] });
    const attempt1 = await waitFor(async () => {
      const item = await task(id);
      return item.session_id !== undefined && existsSync(join(first.home, 'workspaces', item.session_id, 'kill.txt'))
        ? item.session_id
        : undefined;
    }, 'attempt 1 wrote its file');
    expect(worktrees()).toBe(before + 1);
    killWorkers([first]);
    await waitFor(() => first.child.exitCode !== null || first.child.signalCode !== null, 'the worker gone');
    // The killed attempt's workspace is still there until a worker sweeps.
    expect(existsSync(join(first.home, 'workspaces', attempt1))).toBe(true);
    expect(branches()).toContain(`rho/${attempt1}`);
    finished.add('kill');
    const second = await start('node-kill', 'ws-kill', first.home);
    const done = await final(id);
    expect(done).toMatchObject({ state: 'done', attempt: 2, result: { attempt: 2 } });
    const attempt2 = done.result!.session_id!;
    expect(attempt2).not.toBe(attempt1);
    expect(done.result!.workspace).toMatchObject({ branch: `rho/${attempt2}`, changes: { files: 1 } });
    // Exactly the finished session's worktree is left: attempt 1's is gone with its branch.
    expect(worktrees()).toBe(before + 1);
    expect(branches().sort()).toEqual([...branchesBefore, `rho/${attempt2}`].sort());
    expect(existsSync(join(first.home, 'workspaces', attempt1))).toBe(false);
    expect(existsSync(join(first.home, 'workspaces', attempt2, 'kill.txt'))).toBe(true);
    expect(git(repo, 'status', '--porcelain')).toBe('');
    const swept = second.log
      .filter((line) => line.includes('"workspace_swept"'))
      .map((line) => JSON.parse(line) as { discarded: { session_id: string; task_id: string; attempt: number }[] });
    expect(swept.flatMap((event) => event.discarded)).toEqual([
      { session_id: attempt1, task_id: id, attempt: 1, ended: false },
    ]);
  });
  it('a task handed back by a draining worker leaves no workspace there; the node that completes it keeps its own', async () => {
    const before = worktrees();
    const first = await start('node-drain', 'ws-drain', undefined, '--grace', '0');
    const id = await submit({ prompt: 'loop drain', profile: 'developer', working_dir: repo, labels: ['ws-drain'] });
    const attempt1 = await waitFor(async () => {
      const item = await task(id);
      return item.session_id !== undefined && existsSync(join(first.home, 'workspaces', item.session_id, 'drain.txt'))
        ? item.session_id
        : undefined;
    }, 'attempt 1 wrote its file');
    process.kill(first.child.pid!, 'SIGTERM');
    await waitFor(() => first.log.some((line) => line.includes('"worker_stopped"')), 'the worker drained');
    expect(first.log.some((line) => line.includes('"task_handed_back"'))).toBe(true);
    const swept = first.log
      .filter((line) => line.includes('"workspace_swept"'))
      .flatMap((line) => (JSON.parse(line) as { discarded: { session_id: string; ended: boolean }[] }).discarded);
    expect(swept).toEqual([expect.objectContaining({ session_id: attempt1, task_id: id, attempt: 1, ended: true })]);
    expect(existsSync(join(first.home, 'workspaces', attempt1))).toBe(false);
    expect(branches()).not.toContain(`rho/${attempt1}`);
    finished.add('drain');
    const second = await start('node-drain-b', 'ws-drain');
    const done = await final(id);
    expect(done).toMatchObject({ state: 'done', attempt: 2, result: { host: 'node-drain-b' } });
    expect(existsSync(join(second.home, 'workspaces', done.result!.session_id!, 'drain.txt'))).toBe(true);
    expect(worktrees()).toBe(before + 1);
  });
});
