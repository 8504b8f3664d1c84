import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bin } from './support/run-rho.js';
import type { Outcome } from './support/run-rho.js';

// Where rho writes what the user asked for (an answer with -o, an export, stdout redirected to a
// file) on a disk that fills up: exit 1 and a message that says the output is missing or
// incomplete, never exit 0 with "Output written to" over a cut-off file. The disk is a 64 KiB
// tmpfs mounted in a private mount namespace (`unshare -m`), so nothing outside the test sees it.

let server: LoopbackServer | undefined;
let home: string;
const directories: string[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const canMount =
  spawnSync('unshare', ['-m', 'sh', '-c', `mount -t tmpfs -o size=64k tmpfs "${tmpdir()}"`], { encoding: 'utf8' })
    .status === 0;

beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'rho-output-home-'));
  directories.push(home);
});
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

/**
 * Runs `rho ARGS` in a private mount namespace where `$FULL` is a 64 KiB tmpfs; `redirect` (a
 * shell redirection such as `> "$FULL/out"`) is applied to rho's stdout. Prints what is left in
 * `$FULL` after the run on fd 3, which ends up after a `--- left:` line in stdout.
 */
function rhoOnFullDisk(
  args: (full: string) => string[],
  options: { redirect?: string; fill?: boolean } = {},
): Promise<Outcome & { left: string[] }> {
  const full = mkdtempSync(join(tmpdir(), 'rho-output-full-'));
  directories.push(full);
  const quoted = args(full)
    .map((argument) => `'${argument.replaceAll("'", "'\\''")}'`)
    .join(' ');
  const script = [
    `mount -t tmpfs -o size=64k tmpfs "$FULL" || exit 99`,
    ...(options.fill === true ? ['head -c 65536 /dev/zero > "$FULL/fill" 2>/dev/null'] : []),
    `node "$BIN" ${quoted} ${options.redirect ?? ''}`,
    'code=$?',
    'echo "--- left:"; ls "$FULL"',
    'exit $code',
  ].join('\n');
  return new Promise((resolve, reject) => {
    const child = spawn('unshare', ['-m', 'sh', '-c', script], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', RHO_HOME: home, FULL: full, BIN: bin },
      cwd: tmpdir(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const [before, after = ''] = stdout.split('--- left:\n');
      resolve({ code, stdout: before!, stderr, left: after.split('\n').filter((line) => line !== '') });
    });
  });
}

/** An answer of 100 KB: more than the 64 KiB disk holds. */
async function serveLongAnswers(count: number): Promise<string> {
  server = await startLoopbackServer({
    steps: Array.from({ length: count }, () => ({ type: 'response' as const, text: 'a'.repeat(100_000) })),
  });
  return server.url;
}

describe.skipIf(!canMount)('output on a full disk', () => {
  it('-o: exits 1, says the answer was not saved and where it is, and leaves no cut-off file', async () => {
    const url = await serveLongAnswers(1);
    const outcome = await rhoOnFullDisk((full) => ['--base-url', url, '-o', join(full, 'answer.md'), 'write a lot'], {
      redirect: '>/dev/null',
    });
    expect(outcome.stderr).not.toContain('Output written to');
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(/rho: Cannot write .*answer\.md: ENOSPC \(no space left on the device\)\./);
    expect(outcome.stderr).toMatch(/The answer was not saved there; it is in the session: rho export [0-9a-f]{8}\./);
    expect(outcome.left).toEqual([]);
    expect(outcome.stderr).not.toMatch(/\n\s+at /);
  });

  it('a run whose stdout is a file on a full disk exits 1 and says its output is incomplete', async () => {
    const url = await serveLongAnswers(1);
    const outcome = await rhoOnFullDisk(() => ['--base-url', url, 'write a lot'], { redirect: '> "$FULL/answer.txt"' });
    expect(outcome.code).toBe(1);
    expect(outcome.stderr).toMatch(
      /rho: Cannot write the standard output \(.*answer\.txt\): ENOSPC \(no space left on the device\)\. What rho printed there is incomplete/,
    );
    // The run itself completed and its session is whole.
    expect(outcome.stderr).toMatch(/Session: [0-9a-f]{8}/);
  });

  it('export -o and export > FILE exit 1; -o leaves no file; ps > FILE exits 1 without a stack trace', async () => {
    const url = await serveLongAnswers(1);
    const run = await rhoOnFullDisk(() => ['--base-url', url, 'write a lot'], { redirect: '>/dev/null' });
    expect(run.code).toBe(0);
    expect(readdirSync(join(home, 'sessions')).length).toBeGreaterThan(0);

    const toFile = await rhoOnFullDisk((full) => ['export', 'latest', '-o', join(full, 'trajectory.json')]);
    expect(toFile.code).toBe(1);
    expect(toFile.stderr).toMatch(
      /rho: Cannot write .*trajectory\.json: ENOSPC \(no space left on the device\)\. Nothing was written/,
    );
    expect(toFile.left).toEqual([]);

    const redirected = await rhoOnFullDisk(() => ['export', 'latest'], { redirect: '> "$FULL/trajectory.json"' });
    expect(redirected.code).toBe(1);
    expect(redirected.stderr).toContain('What rho printed there is incomplete');

    // A listing of many small writes: the first failed one used to throw out of the table code.
    const listed = await rhoOnFullDisk(() => ['ps'], { fill: true, redirect: '> "$FULL/table.txt"' });
    expect(listed.code).toBe(1);
    expect(listed.stderr).toContain('rho: Cannot write the standard output');
    expect(listed.stderr).not.toMatch(/\n\s+at /);
  });
});
