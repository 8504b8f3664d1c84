// Issue 37 with `--backend daytona`, end to end: the built `rho`, the real @daytonaio/sdk in it,
// and the fake Daytona API of @rho/backend-daytona/testing (its sandbox commands run for real
// under bubblewrap). The sandbox's changes come back to a local workspace after each run, which
// rho diff shows and rho apply brings into the working directory; nothing else here changes.
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeDaytona, type FakeDaytona } from '@rho/backend-daytona/testing';
import { startLoopbackServer, type LoopbackServer } from '@rho/core/testing';
import { sandboxWrapper } from '@rho/permissions';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

const bubblewrap = (await sandboxWrapper()).available;

let server: LoopbackServer | undefined;
let fake: FakeDaytona;
beforeAll(async () => {
  fake = await startFakeDaytona();
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(async () => {
  await fake?.close();
  expect(fake.unknownRoutes).toEqual([]);
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' });

/** A git project with an executable script, and rho's home beside it. */
function project(upload: boolean): { home: string; work: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-daytona-ws-')));
  const work = join(root, 'project');
  mkdirSync(join(work, 'src'), { recursive: true });
  writeFileSync(join(work, 'a.txt'), 'one\ntwo\n');
  writeFileSync(join(work, 'old.txt'), 'to be deleted\n');
  writeFileSync(join(work, 'src', 'run.sh'), '#!/bin/sh\necho run\n');
  chmodSync(join(work, 'src', 'run.sh'), 0o755);
  writeFileSync(join(work, 'agent.yaml'), `backend:\n  name: daytona\n  upload: ${upload}\n`);
  git(work, 'init', '-q', '-b', 'main');
  git(work, 'add', '.');
  git(work, 'commit', '-qm', 'init');
  return { home: join(root, 'home'), work };
}

async function run(work: string, home: string, command: string, flags: string[] = []) {
  server = await startLoopbackServer({
    steps: [
      { type: 'response', toolCalls: [{ name: 'bash', arguments: JSON.stringify({ command }) }] },
      { type: 'response', text: 'done' },
    ],
  });
  const outcome = await runRho(
    ['--base-url', server.url, '-c', 'agent.yaml', '--profile', 'unrestricted', '-y', ...flags, '-p', 'go'],
    { env: { RHO_HOME: home, DAYTONA_API_KEY: fake.apiKey, DAYTONA_API_URL: fake.apiUrl }, cwd: work },
  );
  await server.close();
  server = undefined;
  return outcome;
}

const rho = (work: string, home: string, ...args: string[]) => runRho(args, { env: { RHO_HOME: home }, cwd: work });
const sessionOf = (outcome: { stderr: string }): string => {
  const id = /Session: ([0-9a-f]+)/.exec(outcome.stderr)?.[1];
  expect(id, outcome.stderr).toBeDefined();
  return id!;
};

describe.runIf(bubblewrap || process.env['CI'] === 'true')('the daytona backend with a workspace', () => {
  it('upload: true: the sandbox works on a copy, its changes come back for rho diff, and rho apply brings them here', async () => {
    const { home, work } = project(true);
    const outcome = await run(
      work,
      home,
      'test -x src/run.sh && printf "one\\nTWO\\n" > a.txt && rm old.txt && mkdir -p new && printf "\\000\\377" > new/blob.bin && chmod 600 src/run.sh && git status --short > /dev/null',
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stderr).toMatch(
      /is copied to .* and uploaded from there\.\nWorking in a daytona sandbox; its changes come back to /,
    );
    expect(outcome.stderr).toMatch(
      /4 files changed, \+1\/-2 \(brought back from the sandbox: 3 written, 1 removed\): rho diff/,
    );
    // Nothing here changed yet.
    expect(git(work, 'status', '--porcelain')).toBe('');
    const id = sessionOf(outcome);
    const diff = await rho(work, home, 'diff', id, '--json');
    expect(diff.code, diff.stderr).toBe(0);
    const parsed = JSON.parse(diff.stdout) as { files: { path: string; status: string }[] };
    expect(parsed.files.map(({ path, status }) => `${status} ${path}`).sort()).toEqual([
      'added new/blob.bin',
      'deleted old.txt',
      'mode src/run.sh',
      'modified a.txt',
    ]);
    const applied = await rho(work, home, 'apply', id);
    expect(applied.code, applied.stderr).toBe(0);
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('one\nTWO\n');
    expect(existsSync(join(work, 'old.txt'))).toBe(false);
    expect(readFileSync(join(work, 'new', 'blob.bin'))).toEqual(Buffer.from([0, 255]));
    // git keeps the executable bit of a mode: 0600 comes out as a file that is not executable.
    expect(statSync(join(work, 'src', 'run.sh')).mode & 0o111).toBe(0);
  }, 120_000);

  it('without upload the sandbox starts empty: what the agent leaves comes back as new files; in place, nothing does', async () => {
    const { home, work } = project(false);
    const outcome = await run(work, home, 'ls; echo made > made.txt');
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(outcome.stderr).toContain('starts empty (nothing of');
    const id = sessionOf(outcome);
    const stat = await rho(work, home, 'diff', id, '--stat');
    expect(stat.stdout).toMatch(/made\.txt/);
    expect(stat.stdout).not.toMatch(/a\.txt/);
    expect(existsSync(join(work, 'made.txt'))).toBe(false);

    const inPlace = await run(work, home, 'echo there > there.txt', ['--workspace', 'in-place']);
    expect(inPlace.code, inPlace.stderr).toBe(0);
    const other = sessionOf(inPlace);
    expect(existsSync(join(home, 'workspaces', other))).toBe(false);
    const none = await rho(work, home, 'diff', other);
    expect(none.code).toBe(2);
    expect(existsSync(join(work, 'there.txt'))).toBe(false);
  }, 120_000);
});
