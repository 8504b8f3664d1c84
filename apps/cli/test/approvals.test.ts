/**
 * Walking away (issue 35): a headless `developer` run that hits a dangerous command parks in
 * waiting_approval; `rho approve` / `rho deny` from another process answer it, exactly once; a
 * parked run killed with SIGKILL and resumed honours an answer given while it was gone; a
 * timeout denies; bad input is one line and exit 2, and records nothing.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import type { Outcome } from './support/run-rho.js';
import { bin, runRho } from './support/run-rho.js';
import { hasTmux, TmuxSession } from './support/tmux.js';

let server: LoopbackServer | undefined;
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await server?.close();
  server = undefined;
});

function workspace(): { home: string; work: string } {
  const root = mkdtempSync(join(tmpdir(), 'rho-approvals-'));
  const home = join(root, 'home');
  const work = join(root, 'work');
  mkdirSync(home);
  mkdirSync(join(work, 'build'), { recursive: true });
  writeFileSync(join(work, 'build', 'out.o'), 'object\n');
  return { home, work };
}

const cleanBuild = [
  { type: 'response' as const, toolCalls: [{ id: 'call_rm', name: 'bash', arguments: '{"command": "rm -rf build"}' }] },
  { type: 'response' as const, text: 'Cleaned.' },
];

/** Starts a headless run that waits for approvals; resolves once its call waits, with the session's id and directory. */
async function parkedRun(
  home: string,
  work: string,
  extra: string[] = [],
): Promise<{ id: string; directory: string; done: Promise<Outcome>; child: () => ChildProcess }> {
  let spawned: ChildProcess | undefined;
  const done = runRho(
    ['--base-url', server!.url, '--profile', 'developer', '--when-unattended', 'wait', ...extra, 'clean the build'],
    {
      env: { RHO_HOME: home },
      cwd: work,
      onSpawn: (child) => {
        spawned = child;
        children.push(child);
      },
    },
  );
  const sessions = join(home, 'sessions');
  for (let waited = 0; waited < 60_000; waited += 50) {
    const ids = existsSync(sessions) ? readdirSync(sessions) : [];
    for (const id of ids) {
      const trace = join(sessions, id, 'trace.jsonl');
      // The call waits once the trace says so and meta.json has the status, which is written just
      // after (reading meta.json as soon as the trace had the record lost that race on Node 24 in CI).
      if (
        existsSync(trace) &&
        readFileSync(trace, 'utf8').includes('"approval_requested"') &&
        metaStatus(join(sessions, id)) === 'waiting_approval'
      )
        return { id, directory: join(sessions, id), done, child: () => spawned! };
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(
    `no call waited; the run printed: ${JSON.stringify(await Promise.race([done, Promise.resolve(undefined)]))}`,
  );
}

function metaStatus(directory: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(directory, 'meta.json'), 'utf8')) as { status?: string }).status;
  } catch {
    return undefined;
  }
}

const records = (directory: string) =>
  readFileSync(join(directory, 'trace.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('approvals that wait, answered from another terminal', () => {
  it('parks a headless run; rho approve lets it continue and the command runs', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ steps: cleanBuild });
    const run = await parkedRun(home, work);
    const meta = JSON.parse(readFileSync(join(run.directory, 'meta.json'), 'utf8')) as { status: string };
    expect(meta.status).toBe('waiting_approval');
    expect(existsSync(join(work, 'build'))).toBe(true);
    const approved = await runRho(['approve', run.id.slice(0, 8), '--dir', join(home, 'sessions')], {
      env: { RHO_HOME: home },
    });
    expect(approved.stderr).toBe('');
    expect(approved.code).toBe(0);
    expect(approved.stdout).toMatch(/^Approved bash.*rm -rf build.*\(call call_rm\)/);
    const outcome = await run.done;
    expect(outcome.code).toBe(0);
    expect(outcome.stderr).toMatch(/Waiting for approval: bash/);
    expect(existsSync(join(work, 'build'))).toBe(false);
    expect(records(run.directory).find((record) => record.type === 'approval_answered')).toMatchObject({
      decision: 'approve',
      by: expect.stringMatching(/.+@.+/),
    });
  });

  it('rho deny ends the call with the reason given to the model', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ steps: cleanBuild });
    const run = await parkedRun(home, work);
    const denied = await runRho(['deny', run.id, '--reason', 'keep the objects for the release'], {
      env: { RHO_HOME: home },
    });
    expect(denied.code).toBe(0);
    const outcome = await run.done;
    // The only call was refused: exit 1, and the status says so.
    expect(outcome.code).toBe(1);
    expect(existsSync(join(work, 'build', 'out.o'))).toBe(true);
    expect(JSON.stringify(server.requests[1]!.body)).toContain('keep the objects for the release');
    expect(JSON.parse(readFileSync(join(run.directory, 'meta.json'), 'utf8'))).toMatchObject({ status: 'refused' });
    // Every view agrees: rho ps (table and --json), rho watch --json and rho export (ATIF).
    const env = { RHO_HOME: home };
    const table = await runRho(['ps'], { env });
    expect(table.stdout).toMatch(new RegExp(`^${run.id}\\s+refused\\s`, 'm'));
    const listed = JSON.parse((await runRho(['ps', '--json', '--status', 'refused'], { env })).stdout) as {
      id: string;
      status: string;
    }[];
    expect(listed).toEqual([expect.objectContaining({ id: run.id, status: 'refused' })]);
    const watched = (await runRho(['watch', run.id, '--json'], { env })).stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; status?: string });
    expect(watched.at(-1)).toMatchObject({ type: 'run_end', status: 'refused' });
    // rho watch says what waited, how to answer it, and who answered it how.
    const lines = (await runRho(['watch', run.id], { env })).stdout.split('\n');
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^\\d\\d:\\d\\d:\\d\\d ⏸ waiting for approval: bash\\(rm -rf build\\) — .*rm -rf.*; answer with rho approve ${run.id} call_rm or rho deny ${run.id} call_rm; at .* UTC it is denied$`,
        ),
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^\d\d:\d\d:\d\d ✗ denied by .+@.+ \(once\) — bash call call_rm: keep the objects for the release$/,
      ),
    );
    // The ATIF export's runs say refused too.
    const exported = JSON.parse((await runRho(['export', run.id], { env })).stdout) as {
      extra?: { runs?: { status: string }[] };
    };
    expect(exported.extra?.runs?.map((entry) => entry.status)).toEqual(['refused']);
  });

  it('the monitor console answers a waiting call (approve and deny are its commands too)', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ steps: cleanBuild });
    const run = await parkedRun(home, work);
    const consoleRun = await runRho(['monitor'], {
      env: { RHO_HOME: home },
      input: `ps\nbogus\napprove ${run.id.slice(0, 8)}\nquit\n`,
    });
    expect(consoleRun.code).toBe(0);
    expect(consoleRun.stdout).toMatch(new RegExp(`^${run.id}\\s+waiting_approval\\s`, 'm'));
    expect(consoleRun.stdout).toMatch(/Approved bash.*rm -rf build.*\(call call_rm\)/);
    expect((await run.done).code).toBe(0);
    expect(existsSync(join(work, 'build'))).toBe(false);
  });

  it('two answers racing apply once; the loser is told which answer stands', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ steps: cleanBuild });
    const run = await parkedRun(home, work);
    const env = { RHO_HOME: home };
    const [first, second] = await Promise.all([
      runRho(['approve', run.id], { env }),
      runRho(['deny', run.id, '--reason', 'no'], { env }),
    ]);
    const codes = [first.code, second.code].sort();
    expect(codes).toEqual([0, 2]);
    const loser = first.code === 2 ? first : second;
    expect(loser.stderr).toMatch(
      /^rho: call call_rm was already answered \((approve|deny) by .+\); that answer stands/,
    );
    await run.done;
    expect(records(run.directory).filter((record) => record.type === 'approval_answered')).toHaveLength(1);
  });

  it('a parked run SIGKILLed and resumed honours the answer given while it was gone', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ steps: cleanBuild });
    const run = await parkedRun(home, work);
    run.child().kill('SIGKILL');
    await run.done;
    const approved = await runRho(['approve', run.id], { env: { RHO_HOME: home } });
    expect(approved.stderr).toBe('');
    expect(approved.code).toBe(0);
    expect(approved.stdout).toMatch(/continue it with rho --resume/);
    const resumed = await runRho(['--base-url', server.url, '--resume', run.id, '--when-unattended', 'wait'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(resumed.stderr).not.toMatch(/^rho: /m);
    expect(resumed.code).toBe(0);
    expect(existsSync(join(work, 'build'))).toBe(false);
    const answered = records(run.directory).filter((record) => record.type === 'approval_answered');
    expect(answered).toHaveLength(1);
    expect(records(run.directory).filter((record) => record.type === 'tool_start')).toHaveLength(1);
  });

  it.skipIf(!hasTmux)(
    'a parked call resumed at a terminal: an answer from another terminal closes the prompt and applies',
    async () => {
      const { home, work } = workspace();
      server = await startLoopbackServer({ steps: cleanBuild });
      const run = await parkedRun(home, work);
      run.child().kill('SIGTERM');
      expect((await run.done).code).toBe(4);
      const terminal = new TmuxSession(
        `'${process.execPath}' '${bin}' --base-url '${server.url}' --resume ${run.id}`,
        { RHO_HOME: home, NO_COLOR: '1' },
        work,
      );
      try {
        await terminal.waitFor(/Allow\?/, 30_000);
        const approved = await runRho(['approve', run.id], { env: { RHO_HOME: home } });
        expect(approved.code, approved.stderr).toBe(0);
        const screen = await terminal.waitFor(/\[exit \d+\]/, 30_000);
        expect(screen).toContain('Answered elsewhere; this prompt is closed.');
        expect(screen).toContain('[exit 0]');
      } finally {
        terminal.kill();
      }
      expect(existsSync(join(work, 'build'))).toBe(false);
      const answered = records(run.directory).filter((record) => record.type === 'approval_answered');
      expect(answered).toEqual([expect.objectContaining({ decision: 'approve', source: 'operator' })]);
    },
  );

  it('SIGTERM while waiting parks the run: exit 4, status waiting_approval, resumable', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ steps: cleanBuild });
    const run = await parkedRun(home, work);
    run.child().kill('SIGTERM');
    const outcome = await run.done;
    expect(outcome.code).toBe(4);
    expect(outcome.stderr).toMatch(/the run stopped while call call_rm waits for approval: answer with rho approve/);
    expect(JSON.parse(readFileSync(join(run.directory, 'meta.json'), 'utf8'))).toMatchObject({
      status: 'waiting_approval',
    });
    // No process runs it, but it is not dead: rho ps says parked, and why.
    const env = { RHO_HOME: home };
    expect((await runRho(['ps'], { env })).stdout).toMatch(new RegExp(`^${run.id}\\s+parked\\s`, 'm'));
    const listed = JSON.parse((await runRho(['ps', '--json'], { env })).stdout) as Record<string, unknown>[];
    expect(listed.find((session) => session.id === run.id)).toMatchObject({
      status: 'parked',
      recorded_status: 'waiting_approval',
      parked_reason: expect.stringContaining('rho approve'),
    });
  });

  it('rho approvals lists the waiting call with its risk and the exact commands that answer it', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ steps: cleanBuild });
    const run = await parkedRun(home, work);
    const env = { RHO_HOME: home };
    const listed = await runRho(['approvals'], { env });
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    const lines = listed.stdout.split('\n');
    expect(lines[0]).toMatch(/^1 tool call waits for approval in .*sessions:$/);
    expect(lines[2]).toMatch(
      new RegExp(
        `^${run.id}  call call_rm  bash  waiting \\d+s  expires in 59m\\d\\ds \\(then denied\\)  waiting_approval$`,
      ),
    );
    expect(lines.slice(3)).toEqual([
      '  bash(rm -rf build)',
      expect.stringMatching(/^ {2}risk: .*rm -rf/),
      '  dangerous: matches "rm -rf" (only a person approves it, for this call)',
      `  rho approve ${run.id} call_rm`,
      `  rho deny ${run.id} call_rm --reason "..."`,
      '',
    ]);
    const json = JSON.parse((await runRho(['approvals', '--json'], { env })).stdout) as Record<string, unknown>[];
    expect(json).toEqual([
      expect.objectContaining({
        session_id: run.id,
        call_id: 'call_rm',
        tool: 'bash',
        arguments: { command: 'rm -rf build' },
        risk: expect.stringContaining('rm -rf'),
        dangerous: true,
        dangerous_pattern: 'rm -rf',
        status: 'waiting_approval',
        on_timeout: 'deny',
        expires_in_ms: expect.any(Number),
        approve_command: `rho approve ${run.id} call_rm`,
        deny_command: `rho deny ${run.id} call_rm --reason "..."`,
        answer_on_host: null,
      }),
    ]);
    expect(json[0]!.expires_in_ms as number).toBeGreaterThan(3_000_000);
    // The listed command answers it, as listed; then nothing waits.
    const approved = await runRho(String(json[0]!.approve_command).split(' ').slice(1), { env });
    expect(approved.code).toBe(0);
    expect((await run.done).code).toBe(0);
    expect(existsSync(join(work, 'build'))).toBe(false);
    const after = await runRho(['approvals'], { env });
    expect(after.stdout).toMatch(/^No tool call waits for approval in .*sessions\.\n$/);
  });

  it('rho approvals shows a call of a run that was stopped while it waited as parked', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ steps: cleanBuild });
    const run = await parkedRun(home, work);
    run.child().kill('SIGTERM');
    expect((await run.done).code).toBe(4);
    const listed = await runRho(['approvals', join(home, 'sessions')], { env: { RHO_HOME: home } });
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`^${run.id}  call call_rm  bash  .*  parked$`, 'm'));
    expect(listed.stdout).toContain(`  rho approve ${run.id} call_rm\n`);
  });

  it('a timeout denies the call', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ steps: cleanBuild });
    const run = await parkedRun(home, work, ['--approval-timeout', '1s', '--on-timeout', 'approve']);
    const outcome = await run.done;
    // rm -rf is a dangerous pattern: a timeout never approves it, whatever --on-timeout says.
    expect(outcome.code).toBe(1);
    expect(existsSync(join(work, 'build'))).toBe(true);
    expect(records(run.directory).find((record) => record.type === 'approval_answered')).toMatchObject({
      decision: 'deny',
      source: 'timeout',
    });
  });

  it('bad input: one line, exit 2, nothing recorded', async () => {
    const { home, work } = workspace();
    server = await startLoopbackServer({ steps: cleanBuild });
    const run = await parkedRun(home, work);
    const env = { RHO_HOME: home };
    const unknown = await runRho(['approve', 'ffffffff'], { env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
    const wrongCall = await runRho(['approve', run.id, 'call_nope'], { env });
    expect(wrongCall.code).toBe(2);
    expect(wrongCall.stderr).toMatch(
      /^rho: Call call_nope does not wait for approval .*waiting: call_rm.*nothing was recorded\.\n$/,
    );
    const denyAlways = await runRho(['deny', run.id, '--always-tool'], { env });
    expect(denyAlways.code).toBe(2);
    expect(
      existsSync(join(run.directory, 'approvals')) && readdirSync(join(run.directory, 'approvals')).length,
    ).toBeFalsy();
    expect((await runRho(['approve', run.id], { env })).code).toBe(0);
    await run.done;
    const again = await runRho(['approve', run.id], { env });
    expect(again.code).toBe(2);
    // Answered a moment ago: the second answerer is told which answer stands.
    expect(again.stderr).toMatch(/^rho: call call_rm was already answered \(approve by .+\); that answer stands/);
  });
});
