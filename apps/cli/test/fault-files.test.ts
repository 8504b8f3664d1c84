// Real `rho` processes against hostile files: a zip-bomb workbook and a file that is mostly invalid
// UTF-8 handed to the tools, traces `rho watch` cannot read, a trace too long to follow record by
// record in quadratic time. (The files are made here; chmod 000 does not stop
// root, so the unreadable cases are ones that bite root too: a directory, a symbolic-link loop.)
import { spawn, spawnSync } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { chmodSync, constants, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage } from '@rho/core';
import { startLoopbackServer } from '@rho/core/testing';
import { describe, expect, it } from 'vitest';
import { watchWithChildren } from '@rho/monitor';
import type { Outcome } from './support/run-rho.js';
import { bin, runRho } from './support/run-rho.js';
import { workbookMembers, writeZip } from '@rho/tools-fs/testing';

const SESSION_ID = '5e55104d2b7c4a0f9d61c3a8e0f7b2aa';

/** A RHO_HOME with one session: its meta.json (finished or running in this test's process) and nothing else. */
function sessionHome(status: 'completed' | 'running'): { home: string; directory: string } {
  const home = mkdtempSync(join(tmpdir(), 'rho-fault-files-'));
  const directory = join(home, 'sessions', SESSION_ID);
  mkdirSync(directory, { recursive: true });
  const now = new Date().toISOString();
  const meta = {
    id: SESSION_ID,
    status,
    model: 'gpt-5-mini',
    profile: 'readonly',
    started_at: now,
    updated_at: now,
    heartbeat_at: now,
    // A live pid on this host with a fresh heartbeat: `rho watch` takes the session for running.
    pid: process.pid,
    hostname: hostname(),
    first_prompt: 'Look at the logs',
    parent_id: null,
  };
  writeFileSync(join(directory, 'meta.json'), `${JSON.stringify(meta, null, 2)}\n`);
  return { home, directory };
}

function watch(home: string, ...flags: string[]): Promise<Outcome> {
  return runRho(['watch', SESSION_ID.slice(0, 8), ...flags], { env: { RHO_HOME: home } });
}

/** No Node stack trace, no unhandled-error dump. */
function expectNoStackTrace(stderr: string): void {
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).not.toContain('node:internal');
}

describe('hostile files handed to the tools', () => {
  it('refuses a zip-bomb workbook and a mostly-invalid-UTF-8 file, and the run goes on', async () => {
    const work = mkdtempSync(join(tmpdir(), 'rho-fault-files-work-'));
    // 123 MB of sheet XML in an archive of a few hundred KB, as in the report that found the bug.
    const head = Buffer.from(
      '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>',
    );
    const tail = Buffer.from('</sheetData></worksheet>');
    const inflated = 123 * 1024 * 1024;
    const sheet = Buffer.concat([
      head,
      Buffer.alloc(inflated - head.length - tail.length, '<row><c t="inlineStr"><is><t>bomb</t></is></c></row>'),
      tail,
    ]);
    writeFileSync(join(work, 'bomb.xlsx'), writeZip(workbookMembers(sheet)));
    // No NUL byte, but every other byte is a stray UTF-8 continuation or lead byte.
    const garbage = Buffer.alloc(32 * 1024);
    for (let index = 0; index < garbage.length; index += 1)
      garbage[index] = index % 2 === 0 ? 0x80 + (index % 0x7f) : 0x41 + (index % 26);
    writeFileSync(join(work, 'capture.log'), garbage);
    const server = await startLoopbackServer({
      steps: [
        {
          type: 'response',
          toolCalls: [
            { name: 'read_excel', arguments: JSON.stringify({ path: 'bomb.xlsx', action: 'read_sheet', end_row: 5 }) },
          ],
        },
        { type: 'response', toolCalls: [{ name: 'read', arguments: JSON.stringify({ path: 'capture.log' }) }] },
        { type: 'response', text: 'Neither file could be read.' },
      ],
    });
    try {
      const home = join(work, 'home');
      // A heap of 192 MB: loading the workbook (2.27 GB before the fix) would end the process.
      const outcome = await runRho(
        ['--base-url', server.url, '-y', 'Show me the first rows of bomb.xlsx and capture.log'],
        {
          cwd: work,
          env: { RHO_HOME: home, NODE_OPTIONS: '--max-old-space-size=192' },
        },
      );
      expect(outcome.stderr).not.toMatch(/heap out of memory|^\s+at /m);
      expect(outcome.code).toBe(0);
      expect(outcome.stdout).toContain('Neither file could be read.');
      const toolResult = (request: number) =>
        (server.requests[request]!.body as { messages: ChatMessage[] }).messages.at(-1)!;
      expect(toolResult(1)).toMatchObject({ role: 'tool' });
      expect(toolResult(1).content).toMatch(
        /^Error reading Excel file: bomb\.xlsx inflates to 123 MB of XML \(0\.\d MB compressed; xl\/worksheets\/sheet1\.xml alone is 123 MB\), more than read_excel's limit of 32 MB\./,
      );
      expect(toolResult(2).content).toBe(
        `Cannot read binary file: ${join(work, 'capture.log')} (50% of its first 8 KiB is not valid UTF-8, so it is not text). ` +
          "Use shell commands like 'file', 'exiftool', or 'strings' for binary inspection.",
      );
    } finally {
      await server.close();
    }
  }, 60_000);
});

describe('rho watch on a trace it cannot read', () => {
  it('says the trace is a directory and exits 1, without a stack trace', async () => {
    const { home, directory } = sessionHome('completed');
    mkdirSync(join(directory, 'trace.jsonl'));
    const outcome = await watch(home);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain(`rho: Cannot read the trace ${join(directory, 'trace.jsonl')}: it is a directory`);
    expectNoStackTrace(outcome.stderr);
  });

  it('does not wait forever on a running session whose trace is a symbolic-link loop', async () => {
    // Before: the failed open was taken for "not written yet", and a running session was waited on forever.
    const { home, directory } = sessionHome('running');
    symlinkSync('trace.jsonl', join(directory, 'trace.jsonl'));
    const outcome = await watch(home, '--json');
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain(
      `Cannot read the trace ${join(directory, 'trace.jsonl')}: too many levels of symbolic links (ELOOP)`,
    );
    expect(outcome.stdout).toBe('');
    expectNoStackTrace(outcome.stderr);
  });

  it('says permission denied (EACCES) for a trace it may not read', async (context) => {
    // chmod 000 does not stop root: as root, rho runs as nobody (uid 65534), where it can.
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      const probe = spawnSync(
        process.execPath,
        ['-e', `require('node:fs').accessSync(${JSON.stringify(bin)}, ${constants.R_OK})`],
        { uid: 65534, gid: 65534 },
      );
      if (probe.status !== 0) context.skip('running as root, and user nobody cannot read the built rho here');
    }
    const { home, directory } = sessionHome('running');
    const trace = join(directory, 'trace.jsonl');
    writeFileSync(trace, '{"type": "run_start", "prompt": "secret"}\n');
    chmodSync(trace, 0o000);
    for (const path of [home, join(home, 'sessions'), directory]) chmodSync(path, 0o755);
    const outcome = await new Promise<Outcome>((resolve, reject) => {
      const child = spawn(process.execPath, [bin, 'watch', SESSION_ID.slice(0, 8)], {
        env: { PATH: process.env.PATH, HOME: tmpdir(), NO_COLOR: '1', RHO_HOME: home },
        cwd: tmpdir(),
        stdio: ['ignore', 'pipe', 'pipe'],
        ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
    expect(outcome.stderr).toContain(`rho: Cannot read the trace ${trace}: permission denied (EACCES).`);
    expect(outcome.code).toBe(1);
    expectNoStackTrace(outcome.stderr);
  });

  it('does not wait forever on a running session whose trace is a FIFO', async () => {
    // Opening a FIFO for reading blocks until a writer appears: the follower must never open one.
    const { home, directory } = sessionHome('running');
    const made = spawnSync('mkfifo', [join(directory, 'trace.jsonl')]);
    if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr.toString()}`);
    const outcome = await watch(home);
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toContain(
      `Cannot read the trace ${join(directory, 'trace.jsonl')}: it is not a regular file`,
    );
    expectNoStackTrace(outcome.stderr);
  });
});

/** A finished session whose trace holds `records` records: run_start, messages, run_end. */
function longTraceHome(records: number): { home: string; directory: string } {
  const session = sessionHome('completed');
  const lines = [JSON.stringify({ type: 'run_start', prompt: 'Look at the logs', ts: '2026-11-01T00:00:00.000Z' })];
  for (let index = 1; index < records - 1; index += 1) {
    lines.push(
      JSON.stringify({ type: 'message', role: 'assistant', content: `step ${index}`, ts: '2026-11-01T00:00:00.000Z' }),
    );
  }
  lines.push(JSON.stringify({ type: 'run_end', status: 'completed', ts: '2026-11-01T00:00:00.000Z' }));
  writeFileSync(join(session.directory, 'trace.jsonl'), `${lines.join('\n')}\n`);
  return session;
}

describe('rho watch on a long trace', () => {
  it("holds one abort listener on the caller's signal however many records it follows, and none after", async () => {
    const records = 100_000;
    const { home, directory } = longTraceHome(records);
    const controller = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    let seen = 0;
    let mostListeners = 0;
    try {
      for await (const { record } of watchWithChildren(
        join(home, 'sessions'),
        { id: SESSION_ID, directory },
        { fromStart: true, follow: false, signal: controller.signal, pollIntervalMs: 20 },
      )) {
        seen += 1;
        if (seen === 1) expect(record.type).toBe('run_start');
        mostListeners = Math.max(mostListeners, getEventListeners(controller.signal, 'abort').length);
      }
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(seen).toBe(records);
    // Before: one more listener each time the consumer caught up with the followers.
    expect(mostListeners).toBe(1);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(warnings.map((warning) => warning.name)).not.toContain('MaxListenersExceededWarning');
  }, 120_000);

  it('follows 100,000 records to the end, each once, with no MaxListenersExceededWarning', async () => {
    const records = 100_000;
    const { home } = longTraceHome(records);
    // Before: one abort listener per record was added and never removed (a warning after ten
    // records), and the time grew with the square of the trace: 100,000 records did not finish.
    const outcome = await watch(home, '--json');
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    const shown = outcome.stdout.split('\n').filter((line) => line !== '');
    expect(shown).toHaveLength(records);
    expect(JSON.parse(shown[0]!)).toMatchObject({ type: 'run_start' });
    expect(JSON.parse(shown[50_000]!)).toMatchObject({ content: 'step 50000' });
    expect(JSON.parse(shown.at(-1)!)).toMatchObject({ type: 'run_end' });
  }, 120_000);
});
