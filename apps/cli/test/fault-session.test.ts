import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { State } from '@rho/core';
import type { ChatMessage } from '@rho/core';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer, LoopbackStep, RecordedRequest } from '@rho/core/testing';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

// Faults of the session files, with real `rho` processes: a second writer, a full or read-only
// disk, files rho may not write, malformed records and directives, unreadable meta.json.

function workspace(): { root: string; home: string; work: string } {
  const root = mkdtempSync(join(tmpdir(), 'rho-fault-session-'));
  const work = join(root, 'work');
  mkdirSync(work);
  writeFileSync(join(work, 'a.txt'), 'alpha\n');
  return { root, home: join(root, 'home'), work };
}

function onlySession(home: string): string {
  const sessions = readdirSync(join(home, 'sessions'));
  expect(sessions).toHaveLength(1);
  return join(home, 'sessions', sessions[0]!);
}

/** Every file under a directory, recursively (relative paths). */
function filesUnder(directory: string): string[] {
  return readdirSync(directory, { recursive: true, encoding: 'utf8' }).sort();
}

/** Every tool call in history has exactly one result, and replay found nothing unreadable. */
function expectValidHistory(directory: string): State {
  const state = State.fromJsonl(readFileSync(join(directory, 'trace.jsonl')));
  expect(state.replay!.skippedLines).toEqual([]);
  expect(state.replay!.invalidRecords).toEqual([]);
  expect(state.replay!.tornLastLine).toBe(false);
  const results = state.messages.flatMap((message) => (message.role === 'tool' ? [message.tool_call_id] : []));
  expect(new Set(results).size).toBe(results.length);
  const calls = state.messages.flatMap((message) =>
    message.role === 'assistant' ? (message.tool_calls ?? []).map((call) => call.id) : [],
  );
  expect(results.sort()).toEqual(calls.sort());
  return state;
}

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('one writer per session', () => {
  it('refuses a second concurrent --resume with a message naming the owner; the history stays valid', async () => {
    const { home, work } = workspace();
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let arrived: () => void = () => {};
    const firstCallOfResume = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const respond = async (request: RecordedRequest): Promise<LoopbackStep> => {
      const messages = (request.body as { messages: ChatMessage[] }).messages;
      const last = messages.at(-1)!;
      if (last.role === 'user' && last.content === 'second task') {
        // The first resumer holds the session while the second one tries.
        arrived();
        await held;
        return { type: 'response', toolCalls: [{ name: 'read', arguments: '{"path": "a.txt"}' }] };
      }
      if (last.role === 'tool') return { type: 'response', text: 'read it' };
      return { type: 'response', text: 'first answer' };
    };
    server = await startLoopbackServer({ respond });
    const env = { RHO_HOME: home };
    const created = await runRho(['--base-url', server.url, 'first task'], { env, cwd: work });
    expect(created.code).toBe(0);
    const directory = onlySession(home);
    const id = directory.split('/').pop()!;

    const first = runRho(['--base-url', server.url, '-r', id, 'second task'], { env, cwd: work });
    await firstCallOfResume;
    const lock = JSON.parse(readFileSync(join(directory, 'lock'), 'utf8')) as {
      pid: number;
      hostname: string;
      since: string;
    };
    const second = await runRho(['--base-url', server.url, '-r', id, 'third task'], { env, cwd: work });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(
      `rho: Session ${directory} is already running in process ${lock.pid} on this host (${lock.hostname}) since ${lock.since}`,
    );
    release();
    const done = await first;
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('read it');

    const state = expectValidHistory(directory);
    // The refused process wrote nothing: its task is nowhere in the history.
    expect(state.messages.some((message) => message.role === 'user' && message.content === 'third task')).toBe(false);
    expect(state.runCount).toBe(2);
    expect(existsSync(join(directory, 'lock'))).toBe(false);
    // And the session resumes normally afterwards.
    const again = await runRho(['--base-url', server.url, '-r', id, 'fourth task'], { env, cwd: work });
    expect(again.code).toBe(0);
    expect(existsSync(join(directory, 'lock'))).toBe(false);
  });
});

describe('the session lock on every way out', () => {
  it('is released when rho is stopped by SIGINT twice (quit at once) and by SIGTERM', async () => {
    for (const signals of [['SIGINT', 'SIGINT'], ['SIGTERM']] as NodeJS.Signals[][]) {
      const { home, work } = workspace();
      server = await startLoopbackServer({ steps: [{ type: 'hang' }] });
      let directory = '';
      const outcome = await runRho(['--json', '--base-url', server.url, 'wait forever'], {
        env: { RHO_HOME: home },
        cwd: work,
        onSpawn: (child) => {
          let sent = false;
          child.stdout!.on('data', (chunk: Buffer) => {
            // Once the model call is under way (the lock is held), stop the process.
            if (sent || !chunk.toString().includes('"llm_start"')) return;
            sent = true;
            directory = onlySession(home);
            expect(existsSync(join(directory, 'lock'))).toBe(true);
            for (const signal of signals) child.kill(signal);
          });
        },
      });
      expect(outcome.code).toBe(130);
      expect(existsSync(join(directory, 'lock'))).toBe(false);
      await server.close();
      server = undefined;
    }
  });
});

describe('an unusable RHO_HOME', () => {
  it('is a configuration error (exit 2) naming the directory when RHO_HOME is a file', async () => {
    const { root, work } = workspace();
    const file = join(root, 'not-a-directory');
    writeFileSync(file, 'x');
    const outcome = await runRho(['--base-url', 'http://127.0.0.1:9/v1', 'task'], {
      env: { RHO_HOME: file },
      cwd: work,
    });
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain(`rho: Cannot create sessions in ${join(file, 'sessions')}: ENOTDIR`);
    expect(outcome.stderr).not.toMatch(/bug in rho/);
  });

  it('is a configuration error (exit 2) when RHO_HOME cannot be written (EACCES, as an unprivileged user)', async (context) => {
    const nobody = unprivilegedUser();
    if (nobody === undefined) return context.skip('needs root to run rho as an unprivileged user (uid 65534)');
    const { root, work } = workspace();
    chmodSync(root, 0o755);
    const home = join(root, 'rho-home');
    mkdirSync(home, { mode: 0o755 });
    const userHome = join(root, 'user-home');
    mkdirSync(userHome);
    chownSync(userHome, nobody, nobody);
    const outcome = await runRho(['--base-url', 'http://127.0.0.1:9/v1', 'task'], {
      env: { RHO_HOME: home, HOME: userHome },
      cwd: work,
      uid: nobody,
      gid: nobody,
    });
    expect(outcome.stderr).toContain(
      `rho: Cannot create sessions in ${join(home, 'sessions')}: EACCES (permission denied)`,
    );
    expect(outcome.code).toBe(2);
  });
});

describe('a trace that cannot be written', () => {
  it('EACCES: exits 1 naming the trace and the errno; meta.json is not left running; no temporary file', async (context) => {
    const nobody = unprivilegedUser();
    if (nobody === undefined) return context.skip('needs root to run rho as an unprivileged user (uid 65534)');
    const { root, home, work } = workspace();
    chmodSync(root, 0o755);
    server = await startLoopbackServer({ respond: () => ({ type: 'response', text: 'fine' }) });
    const created = await runRho(['--base-url', server.url, 'first'], { env: { RHO_HOME: home }, cwd: work });
    expect(created.code).toBe(0);
    const directory = onlySession(home);
    // The session directory belongs to the user, its trace to root: rho may not append to it.
    for (const path of [
      home,
      join(home, 'sessions'),
      directory,
      join(directory, 'meta.json'),
      join(directory, 'config.yaml'),
    ])
      chownSync(path, nobody, nobody);
    const before = readFileSync(join(directory, 'trace.jsonl'), 'utf8');
    const outcome = await runRho(['--base-url', server.url, '-r', 'latest', 'second'], {
      env: { RHO_HOME: home, HOME: root },
      cwd: work,
      uid: nobody,
      gid: nobody,
    });
    expect(outcome.stderr).toContain(
      `rho: Cannot write ${join(directory, 'trace.jsonl')}: EACCES (permission denied).`,
    );
    expect(outcome.stderr).not.toMatch(/bug in rho|\n\s+at /);
    expect(outcome.code).toBe(1);
    expect(JSON.parse(readFileSync(join(directory, 'meta.json'), 'utf8'))).toMatchObject({ status: 'error' });
    expect(readFileSync(join(directory, 'trace.jsonl'), 'utf8')).toBe(before);
    expect(filesUnder(directory)).toEqual(['config.yaml', 'meta.json', 'trace.jsonl']);
  });

  describe('on a small tmpfs', () => {
    const mounts: string[] = [];
    afterAll(() => {
      for (const mountpoint of mounts) spawnSync('umount', [mountpoint]);
    });

    function smallTmpfs(size: string): string | undefined {
      const mountpoint = mkdtempSync(join(tmpdir(), 'rho-tmpfs-'));
      const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', mountpoint], {
        encoding: 'utf8',
      });
      if (mounted.status !== 0) return undefined;
      mounts.push(mountpoint);
      return mountpoint;
    }

    it('ENOSPC: exits 1 naming the trace; what was acknowledged stays; no torn record, temporary file or lock', async (context) => {
      const mountpoint = smallTmpfs('256k');
      if (mountpoint === undefined) return context.skip('cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)');
      const home = join(mountpoint, 'home');
      const { work } = workspace();
      // A long answer that cannot fit in what is left of the disk.
      server = await startLoopbackServer({
        steps: [
          { type: 'response', toolCalls: [{ name: 'read', arguments: '{"path": "a.txt"}' }] },
          { type: 'response', text: 'word '.repeat(60_000), chunkSize: 4096 },
        ],
      });
      // Leave about 24 KiB: session creation and the first turn fit, the answer does not.
      const filler = join(mountpoint, 'filler');
      const free = () =>
        Number(
          spawnSync('df', ['--output=avail', '-B1', mountpoint], { encoding: 'utf8' }).stdout.trim().split('\n').pop(),
        );
      writeFileSync(filler, Buffer.alloc(Math.max(0, free() - 24 * 1024)));
      const outcome = await runRho(['--json', '--base-url', server.url, 'write a long answer'], {
        env: { RHO_HOME: home },
        cwd: work,
      });
      const directory = onlySession(home);
      const trace = join(directory, 'trace.jsonl');
      expect(outcome.stderr).toContain(`rho: Cannot write ${trace}: ENOSPC (no space left on the device).`);
      expect(outcome.stderr).not.toMatch(/bug in rho|\n\s+at /);
      expect(outcome.code).toBe(1);
      expect(JSON.parse(readFileSync(join(directory, 'meta.json'), 'utf8')).status).toBe('error');
      expect(filesUnder(directory)).toEqual(['config.yaml', 'meta.json', 'trace.jsonl']);
      // Every record rho reported (it reports each only after writing it) is in the trace, whole.
      const written = readFileSync(trace, 'utf8');
      const state = State.fromJsonl(written);
      expect(state.replay!.tornLastLine).toBe(false);
      expect(state.replay!.skippedLines).toEqual([]);
      const reported = outcome.stdout
        .trim()
        .split('\n')
        .map((line) => asTraced(JSON.parse(line) as { type: string }))
        .filter((event) => event.type !== 'text' && event.type !== 'reasoning');
      expect(
        written
          .trim()
          .split('\n')
          .map((line) => JSON.parse(line) as unknown),
      ).toEqual(reported);
      expect(reported.some((event) => event.type === 'tool_end')).toBe(true);

      // With space again, the session resumes: the tool call was answered, nothing is interrupted.
      spawnSync('rm', ['-f', filler]);
      server.push({ type: 'response', text: 'short answer' });
      const resumed = await runRho(['--base-url', server.url, '-r', 'latest', 'shorter please'], {
        env: { RHO_HOME: home },
        cwd: work,
      });
      expect(resumed.code).toBe(0);
      expect(resumed.stderr).not.toMatch(/interrupted/);
      expectValidHistory(directory);
    });

    it('EROFS: a read-only RHO_HOME is a configuration error; resuming on it names the file and errno', async (context) => {
      const mountpoint = smallTmpfs('1m');
      if (mountpoint === undefined) return context.skip('cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)');
      const home = join(mountpoint, 'home');
      const { work } = workspace();
      server = await startLoopbackServer({ respond: () => ({ type: 'response', text: 'fine' }) });
      expect((await runRho(['--base-url', server.url, 'first'], { env: { RHO_HOME: home }, cwd: work })).code).toBe(0);
      const directory = onlySession(home);
      const before = readFileSync(join(directory, 'trace.jsonl'), 'utf8');
      const remount = spawnSync('mount', ['-o', 'remount,ro', mountpoint], { encoding: 'utf8' });
      if (remount.status !== 0) return context.skip(`cannot remount the tmpfs read-only: ${remount.stderr.trim()}`);
      const fresh = await runRho(['--base-url', server.url, 'new task'], { env: { RHO_HOME: home }, cwd: work });
      expect(fresh.code).toBe(2);
      expect(fresh.stderr).toContain(
        `rho: Cannot create sessions in ${join(home, 'sessions')}: EROFS (the file system is read-only)`,
      );
      const resumed = await runRho(['--base-url', server.url, '-r', 'latest', 'more'], {
        env: { RHO_HOME: home },
        cwd: work,
      });
      expect(resumed.code).toBe(1);
      expect(resumed.stderr).toContain(
        `rho: Cannot write ${join(directory, 'lock')}: EROFS (the file system is read-only).`,
      );
      expect(readFileSync(join(directory, 'trace.jsonl'), 'utf8')).toBe(before);
      expect(JSON.parse(readFileSync(join(directory, 'meta.json'), 'utf8')).status).toBe('completed');
    });
  });
});

describe('malformed session files', () => {
  it('resumes a trace with records of the wrong shape, skipping each with a note', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ respond: () => ({ type: 'response', text: 'fine' }) });
    expect((await runRho(['--base-url', server.url, 'first'], { env: { RHO_HOME: home }, cwd: work })).code).toBe(0);
    const directory = onlySession(home);
    const lines = readFileSync(join(directory, 'trace.jsonl'), 'utf8').trim().split('\n');
    const count = lines.length;
    writeFileSync(
      join(directory, 'trace.jsonl'),
      `${[...lines, JSON.stringify({ type: 'message', role: 'assistant', content: null, tool_calls: [null] }), JSON.stringify({ type: 'compact', trigger: 'auto', tokens_before: 1, tokens_after: 1, summary: 'S', kept: [null] })].join('\n')}\n`,
    );
    const outcome = await runRho(['--base-url', server.url, '-r', 'latest', 'second'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toContain(
      `Note: trace line ${count + 1} (a message record) was skipped: tool_calls[0] is not an object.`,
    );
    expect(outcome.stderr).toContain(
      `Note: trace line ${count + 2} (a compact record) was skipped: kept[0] is not an object.`,
    );
    // What the model was sent is the valid history only.
    const sent = (server.requests.at(-1)!.body as { messages: ChatMessage[] }).messages.map(
      (message) => message.content,
    );
    expect(sent.slice(1)).toEqual(['first', 'fine', 'second']);
  });

  it('refuses directive lines that are not {"text": string} with a note, and delivers the valid ones', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ respond: () => ({ type: 'response', text: 'fine' }) });
    expect((await runRho(['--base-url', server.url, 'first'], { env: { RHO_HOME: home }, cwd: work })).code).toBe(0);
    const directory = onlySession(home);
    writeFileSync(join(directory, 'directives.jsonl'), 'rm -rf everything\n{"text": 42}\n{"text": "check the logs"}\n');
    const outcome = await runRho(['--base-url', server.url, '-r', 'latest', 'second'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect({ code: outcome.code, stderr: outcome.stderr }).toMatchObject({ code: 0 });
    expect(outcome.stderr).toContain(
      'Directive refused (not sent to the model): the line is not JSON: rm -rf everything.',
    );
    expect(outcome.stderr).toContain(
      'Directive refused (not sent to the model): the line is not {"text": string}: {"text": 42}.',
    );
    const sent = (server.requests.at(-1)!.body as { messages: ChatMessage[] }).messages.map(
      (message) => message.content,
    );
    expect(sent.slice(1)).toEqual(['first', 'fine', 'second', '[Operator directive] check the logs']);
  });

  it('ps lists a session whose meta.json is invalid as unknown and says why', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ respond: () => ({ type: 'response', text: 'fine' }) });
    expect((await runRho(['--base-url', server.url, 'first'], { env: { RHO_HOME: home }, cwd: work })).code).toBe(0);
    const directory = onlySession(home);
    writeFileSync(join(directory, 'meta.json'), '{"status": "compl');
    const listed = await runRho(['ps', '--json'], { env: { RHO_HOME: home }, cwd: work });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject([
      { status: 'unknown', recorded_status: 'unknown', problem: 'meta.json is not valid JSON' },
    ]);
    const table = await runRho(['ps'], { env: { RHO_HOME: home }, cwd: work });
    expect(table.stdout).toMatch(/unknown/);
    expect(table.stderr).toContain(': meta.json is not valid JSON');
  });
});

describe('an unknown cost', () => {
  it('is null in --json run_end, with unpriced_calls, never 0', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({
      respond: () => ({ type: 'response', text: 'fine', usage: { prompt_tokens: 10, completion_tokens: 2 } }),
    });
    const outcome = await runRho(['--json', '--base-url', server.url, '--model', 'a-model-without-a-price', 'task'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.code).toBe(0);
    const end = outcome.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; usage?: { cost_usd: unknown; unpriced_calls?: number } })
      .find((event) => event.type === 'run_end')!;
    expect(end.usage).toMatchObject({ cost_usd: null, unpriced_calls: 1 });
  });
});

/** uid 65534 (nobody) when this process may run children as it, else undefined. */
function unprivilegedUser(): number | undefined {
  return process.getuid?.() === 0 ? 65534 : undefined;
}

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
