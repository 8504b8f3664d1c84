import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer, LoopbackStep } from '@rho/core/testing';
import { sandboxWrapper } from '@rho/permissions';
import { afterEach, describe, expect, it } from 'vitest';
import { bin, runRho } from './support/run-rho.js';
import { hasTmux, TmuxSession } from './support/tmux.js';

// Issue 37 through the built CLI: isolated workspaces (a git worktree, or a copy of a plain
// directory) that change nothing outside until `rho apply`, their diff, apply, conflicts, discard,
// and in-place checkpoints with `rho undo` (and the REPL's /undo).

let server: LoopbackServer | undefined;
let terminal: TmuxSession | undefined;
afterEach(async () => {
  terminal?.kill();
  terminal = undefined;
  await server?.close();
  server = undefined;
});

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd, encoding: 'utf8' });

function place(kind: 'repo' | 'plain'): { root: string; home: string; work: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-ws-')));
  const work = join(root, 'work');
  mkdirSync(join(work, 'src'), { recursive: true });
  writeFileSync(join(work, 'a.txt'), 'one\ntwo\nthree\n');
  writeFileSync(join(work, 'src', 'main.ts'), 'export const x = 1;\n');
  if (kind === 'repo') {
    git(work, 'init', '-q', '-b', 'main');
    git(work, 'add', '.');
    git(work, 'commit', '-qm', 'init');
  }
  // rho's home where it is by default (~/.config/rho): the workspaces are under a .config directory.
  return { root, home: join(root, 'user', '.config', 'rho'), work };
}

/** Every file under `directory` but .git, with its content's hash: equal trees hash equal. */
function treeHash(directory: string): string {
  const hash = createHash('sha256');
  const walk = (folder: string) => {
    for (const name of readdirSync(folder).sort()) {
      if (name === '.git') continue;
      const path = join(folder, name);
      if (statSync(path).isDirectory()) walk(path);
      else hash.update(`${relative(directory, path)}\0${readFileSync(path, 'base64')}\0`);
    }
  };
  walk(directory);
  return hash.digest('hex');
}

const write = (path: string, content: string) => ({ name: 'write', arguments: JSON.stringify({ path, content }) });
const turn = (...calls: ReturnType<typeof write>[]): LoopbackStep => ({ type: 'response', toolCalls: calls });

/** One developer run (-y) against a scripted model; returns its outcome and session id. */
async function run(work: string, home: string, steps: LoopbackStep[], flags: string[] = []) {
  server = await startLoopbackServer({ steps: [...steps, { type: 'response', text: 'Done.' }] });
  const profile = flags.includes('--profile') ? [] : ['--profile', 'developer'];
  const outcome = await runRho(['--base-url', server.url, ...profile, '-y', ...flags, 'Change files.'], {
    env: { RHO_HOME: home },
    cwd: work,
  });
  await server.close();
  server = undefined;
  const id = /Session: ([0-9a-f]+)/.exec(outcome.stderr)?.[1];
  expect(id, outcome.stderr).toBeDefined();
  return { ...outcome, id: id! };
}

const rho = (home: string, cwd: string, ...args: string[]) => runRho(args, { env: { RHO_HOME: home }, cwd });

const bubblewrap = (await sandboxWrapper()).available;

const AGENT_CHANGES = [turn(write('a.txt', 'one\nTWO\nthree\n'), write('src/new.ts', 'export const y = 2;\n'))];

describe('isolated workspaces through the CLI', () => {
  it('in a git repository: nothing outside changes; diff, --stat, --json, ps, export show it; apply lands it; apply again is refused', async () => {
    const { home, work } = place('repo');
    const before = treeHash(work);
    const status = git(work, 'status', '--porcelain');
    const ran = await run(work, home, AGENT_CHANGES, ['--workspace', 'isolated']);
    expect(ran.code, ran.stderr).toBe(0);
    const workspace = join(home, 'workspaces', ran.id);
    expect(ran.stderr).toContain(`Working in an isolated workspace ${workspace} (branch rho/${ran.id})`);
    expect(ran.stderr).toContain(`2 files changed, +2/-1: rho diff ${ran.id}`);
    expect(treeHash(work)).toBe(before);
    expect(git(work, 'status', '--porcelain')).toBe(status);
    expect(readFileSync(join(workspace, 'a.txt'), 'utf8')).toBe('one\nTWO\nthree\n');

    const diff = await rho(home, work, 'diff', ran.id);
    expect(diff.code, diff.stderr).toBe(0);
    expect(diff.stdout).toContain('-two\n+TWO\n');
    expect(diff.stdout).toContain('+export const y = 2;\n');
    expect(diff.stdout).toContain('2 files changed, +2/-1');
    expect(diff.stdout).not.toContain('main.ts');
    expect(diff.stdout).not.toContain('\u001b[');
    const stat = await rho(home, work, 'diff', ran.id, '--stat');
    expect(stat.stdout).toMatch(/^ M a\.txt +\+1\/-1\n A src\/new\.ts +\+1\/-0\n2 files changed, \+2\/-1\n$/);
    const json = JSON.parse((await rho(home, work, 'diff', ran.id, '--json')).stdout) as {
      files: { path: string; status: string }[];
      stats: unknown;
      patch: string;
    };
    expect(json.files.map((file) => [file.path, file.status])).toEqual([
      ['a.txt', 'modified'],
      ['src/new.ts', 'added'],
    ]);
    expect(json.stats).toEqual({ files: 2, additions: 2, deletions: 1 });

    const ps = await rho(home, work, 'ps', '--json');
    expect(
      (JSON.parse(ps.stdout) as { id: string; changes: unknown }[]).find((row) => row.id === ran.id)?.changes,
    ).toEqual({ files: 2, additions: 2, deletions: 1 });
    expect((await rho(home, work, 'ps')).stdout).toMatch(
      new RegExp(`${ran.id} .*\\(2 files changed, \\+2/-1\\) Change files\\.`),
    );
    const patch = await rho(home, work, 'export', ran.id, '--format', 'patch');
    expect(patch.stdout).toBe(json.patch);
    const atif = JSON.parse((await rho(home, work, 'export', ran.id)).stdout) as { extra?: { final_diff?: unknown } };
    expect(atif.extra?.final_diff).toMatchObject({
      stats: { files: 2, additions: 2, deletions: 1 },
      patch: json.patch,
    });

    const applied = await rho(home, work, 'apply', ran.id);
    expect(applied.code, applied.stderr).toBe(0);
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('one\nTWO\nthree\n');
    expect(readFileSync(join(work, 'src', 'new.ts'), 'utf8')).toBe('export const y = 2;\n');
    expect(applied.stderr).toContain(`rho diff ${ran.id} still shows what was applied`);
    expect(existsSync(workspace)).toBe(false);
    const again = await rho(home, work, 'apply', ran.id);
    expect(again.code).toBe(2);
    expect(again.stderr.trim().split('\n')).toHaveLength(1);
    expect(again.stderr).toMatch(/applied/);
    // The workspace is gone; what it applied is still there to read and export.
    const after = JSON.parse((await rho(home, work, 'diff', ran.id, '--json')).stdout) as { patch: string };
    expect(after.patch).toBe(json.patch);
    expect((await rho(home, work, 'export', ran.id, '--format', 'patch')).stdout).toBe(json.patch);
  });

  it('in a plain directory: a copy; nothing outside changes; discard --yes leaves nothing; apply after it is refused', async () => {
    const { home, work } = place('plain');
    const before = treeHash(work);
    const ran = await run(work, home, AGENT_CHANGES, ['--workspace', 'isolated']);
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toMatch(/Working in an isolated workspace .* \(a copy\)/);
    expect(treeHash(work)).toBe(before);
    const diff = await rho(home, work, 'diff', ran.id, '--stat');
    expect(diff.stdout).toContain('2 files changed, +2/-1');
    // Without a terminal, discard needs --yes.
    const asked = await rho(home, work, 'discard', ran.id);
    expect(asked.code).toBe(2);
    expect(asked.stderr).toMatch(/--yes/);
    const discarded = await rho(home, work, 'discard', ran.id, '--yes');
    expect(discarded.code, discarded.stderr).toBe(0);
    expect(existsSync(join(home, 'workspaces', ran.id))).toBe(false);
    expect(treeHash(work)).toBe(before);
    const apply = await rho(home, work, 'apply', ran.id);
    expect(apply.code).toBe(2);
    expect(apply.stderr.trim().split('\n')).toHaveLength(1);
    expect(apply.stderr).toMatch(/discarded/);
  });

  it('apply after a conflicting change in the original is refused whole, naming the file', async () => {
    const { home, work } = place('repo');
    const ran = await run(work, home, AGENT_CHANGES, ['--workspace', 'isolated']);
    expect(ran.code, ran.stderr).toBe(0);
    writeFileSync(join(work, 'a.txt'), 'one\nmine\nthree\n');
    const before = treeHash(work);
    const apply = await rho(home, work, 'apply', ran.id);
    expect(apply.code).toBe(1);
    expect(apply.stderr).toMatch(/a\.txt/);
    expect(treeHash(work)).toBe(before);
    expect(existsSync(join(work, 'src', 'new.ts'))).toBe(false);
  });

  it('discard --yes leaves no branch, worktree or files', async () => {
    const { home, work } = place('repo');
    const ran = await run(work, home, AGENT_CHANGES, ['--workspace', 'isolated']);
    expect(git(work, 'branch', '--list', `rho/${ran.id}`)).toContain(`rho/${ran.id}`);
    const discarded = await rho(home, work, 'discard', ran.id, '--yes');
    expect(discarded.code, discarded.stderr).toBe(0);
    expect(git(work, 'branch', '--list', `rho/${ran.id}`)).toBe('');
    expect(git(work, 'worktree', 'list')).not.toContain(ran.id);
    expect(existsSync(join(home, 'workspaces', ran.id))).toBe(false);
  });

  it('a resumed isolated session runs in its workspace again; not in place, and not once discarded', async () => {
    const { home, work } = place('repo');
    const before = treeHash(work);
    const first = await run(work, home, AGENT_CHANGES, ['--workspace', 'isolated']);
    const workspace = join(home, 'workspaces', first.id);
    const resumed = await run(work, home, [turn(write('d.txt', 'later\n'))], ['--resume', first.id]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.id).toBe(first.id);
    expect(readFileSync(join(workspace, 'd.txt'), 'utf8')).toBe('later\n');
    expect(resumed.stderr).toContain(`3 files changed, +3/-1: rho diff ${first.id}`);
    expect(treeHash(work)).toBe(before);
    server = await startLoopbackServer({ steps: [{ type: 'response', text: 'Done.' }] });
    const moved = await rho(
      home,
      work,
      '--base-url',
      server.url,
      '--resume',
      first.id,
      '--workspace',
      'in-place',
      'Go on.',
    );
    expect(moved.code).toBe(2);
    expect(moved.stderr).toMatch(/--workspace in-place cannot change a resumed session/);
    expect((await rho(home, work, 'discard', first.id, '--yes')).code).toBe(0);
    const gone = await rho(home, work, '--base-url', server.url, '--resume', first.id, 'Go on.');
    expect(gone.code).toBe(2);
    expect(gone.stderr).toMatch(/workspace was discarded/);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses bad input in one line, exit 2: a session that never wrote, an in-place one', async () => {
    const { home, work } = place('repo');
    const idle = await run(work, home, [], ['--workspace', 'isolated']);
    expect(idle.stderr).toMatch(/No files changed in the workspace/);
    const nothing = await rho(home, work, 'apply', idle.id);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr.trim().split('\n')).toHaveLength(1);
    expect(nothing.stderr).toMatch(/Nothing to apply/);
    const inPlace = await run(work, home, [turn(write('c.txt', 'c\n'))]);
    for (const command of ['apply', 'discard']) {
      const refused = await rho(home, work, command, inPlace.id, ...(command === 'discard' ? ['--yes'] : []));
      expect(refused.code, command).toBe(2);
      expect(refused.stderr.trim().split('\n')).toHaveLength(1);
      expect(refused.stderr).toMatch(/ran in place/);
    }
  });
});

describe.skipIf(!bubblewrap && process.env['CI'] !== 'true')('an isolated workspace in the sandbox', () => {
  it("is the tools' read-write working directory; the rest of rho's home stays out of sight", async () => {
    const { home, work } = place('repo');
    mkdirSync(join(home, 'approvals'), { recursive: true });
    writeFileSync(join(home, 'secret.txt'), 'password: hunter2\n');
    const bash = (command: string) => ({ name: 'bash', arguments: JSON.stringify({ command }) });
    const ran = await run(
      work,
      home,
      [turn(write('a.txt', 'sandboxed\n'), bash(`echo shell > made.txt; cat ${home}/secret.txt; ls ${home}`))],
      ['--workspace', 'isolated', '--backend', 'sandbox', '--profile', 'unrestricted'],
    );
    expect(ran.code, ran.stderr).toBe(0);
    const workspace = join(home, 'workspaces', ran.id);
    expect(readFileSync(join(workspace, 'a.txt'), 'utf8')).toBe('sandboxed\n');
    expect(readFileSync(join(workspace, 'made.txt'), 'utf8')).toBe('shell\n');
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    expect(ran.stdout + ran.stderr).not.toContain('hunter2');
    // What the shell saw of rho's home: only the way to its own workspace.
    const trace = readFileSync(join(home, 'sessions', ran.id, 'trace.jsonl'), 'utf8');
    expect(trace).toContain('secret.txt: No such file or directory');
    expect(trace).not.toContain('hunter2');
    const shell = trace
      .split('\n')
      .filter((line) => line.includes('"role":"tool"') && line.includes('output'))
      .map((line) => JSON.parse(JSON.parse(line).content as string) as { output: string })[0];
    expect(shell?.output).toMatch(/^workspaces\n/);
    expect(readdirSync(join(home, 'approvals'))).toEqual([]);
  });
});

describe('in-place checkpoints and rho undo', () => {
  it('undo --to restores byte for byte, and refuses when someone else changed a file since', async () => {
    const { home, work } = place('plain');
    const start = treeHash(work);
    const ran = await run(work, home, [
      turn(write('a.txt', 'turn one\n'), write('b.bin', '\u0000\u0001binary')),
      turn(write('a.txt', 'turn two\n'), write('c.txt', 'added in two\n')),
    ]);
    expect(ran.code, ran.stderr).toBe(0);
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('turn two\n');
    const afterOne = { a: 'turn one\n', b: '\u0000\u0001binary' };
    const undone = await rho(home, work, 'undo', ran.id, '--to', '1', '--yes');
    expect(undone.code, undone.stderr).toBe(0);
    expect(undone.stderr).toMatch(/restore a\.txt/);
    expect(undone.stderr).toMatch(/remove +c\.txt/);
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe(afterOne.a);
    expect(readFileSync(join(work, 'b.bin'), 'utf8')).toBe(afterOne.b);
    expect(existsSync(join(work, 'c.txt'))).toBe(false);
    // The session is told when it runs again (a directive, delivered once).
    const queued = readFileSync(join(home, 'sessions', ran.id, 'directives.jsonl'), 'utf8');
    expect(queued).toContain('the files are back as they were after turn 1. Written back: a.txt. Removed: c.txt.');
    // Someone changes a file the agent wrote: going back further is refused whole.
    writeFileSync(join(work, 'a.txt'), 'mine\n');
    const refused = await rho(home, work, 'undo', ran.id, '--to', '0', '--yes');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/a\.txt/);
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('mine\n');
    expect(existsSync(join(work, 'b.bin'))).toBe(true);
    // Put back, the way to the start is open: the tree is the one before the run.
    writeFileSync(join(work, 'a.txt'), afterOne.a);
    const toStart = await rho(home, work, 'undo', ran.id, '--to', '0', '--yes');
    expect(toStart.code, toStart.stderr).toBe(0);
    expect(treeHash(work)).toBe(start);
  });

  it('--no-checkpoints takes none: undo and diff say so (exit 2)', async () => {
    const { home, work } = place('plain');
    const ran = await run(work, home, [turn(write('a.txt', 'x\n'))], ['--no-checkpoints']);
    const undo = await rho(home, work, 'undo', ran.id, '--yes');
    expect(undo.code).toBe(2);
    expect(undo.stderr).toMatch(/took no checkpoint/);
    const diff = await rho(home, work, 'diff', ran.id);
    expect(diff.code).toBe(2);
    expect(diff.stderr.trim().split('\n')).toHaveLength(1);
    expect(diff.stderr).toMatch(/without checkpoints: rho kept no record/);
  });

  it('rho diff and export --format patch of an in-place run: from its first checkpoint to the files now', async () => {
    const { home, work } = place('plain');
    const ran = await run(work, home, [turn(write('a.txt', 'turn one\n')), turn(write('c.txt', 'added in two\n'))]);
    expect(ran.code, ran.stderr).toBe(0);
    const stat = await rho(home, work, 'diff', ran.id, '--stat');
    expect(stat.code, stat.stderr).toBe(0);
    expect(stat.stdout).toMatch(/ M a\.txt +\+1\/-3/);
    expect(stat.stdout).toMatch(/ A c\.txt +\+1\/-0/);
    expect(stat.stdout).toContain('2 files changed, +2/-3');
    const patch = await rho(home, work, 'export', ran.id, '--format', 'patch');
    expect(patch.code, patch.stderr).toBe(0);
    expect(patch.stdout).toContain('+added in two');
    // Its totals are in meta.json, so rho ps lists them as for an isolated run.
    const ps = JSON.parse((await rho(home, work, 'ps', '--json')).stdout) as { id: string; changes?: unknown }[];
    expect(ps.find((row) => row.id === ran.id)?.changes).toEqual({ files: 2, additions: 2, deletions: 3 });
    expect(patch.stdout).toContain('diff --git a/a.txt b/a.txt');
  });
});

describe.runIf(hasTmux)('/undo in the REPL', () => {
  it('shows the plan, asks y/N, and restores the files of the turn before', async () => {
    const { home, work } = place('plain');
    server = await startLoopbackServer({
      steps: [
        turn(write('a.txt', 'changed\n'), write('new.txt', 'new\n')),
        { type: 'response', text: 'Done.' },
        { type: 'response', text: 'Noted.' },
      ],
    });
    terminal = new TmuxSession(
      `node '${bin}' --base-url ${server.url} --profile developer -y`,
      { RHO_HOME: home },
      work,
    );
    await terminal.waitFor(/Type a task/);
    terminal.type('change files');
    terminal.keys('Enter');
    await terminal.waitFor(/Done\.[\s\S]*\[run: /);
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('changed\n');
    terminal.type('/undo');
    terminal.keys('Enter');
    const asked = await terminal.waitFor(/Restore 2 files\? \[y\/N\]/);
    expect(asked).toMatch(/Back to the files as they were after turn 0/);
    expect(asked).toMatch(/restore a\.txt/);
    expect(asked).toMatch(/remove +new\.txt/);
    terminal.type('y');
    terminal.keys('Enter');
    await terminal.waitFor(/Restored the files of turn 0/);
    expect(readFileSync(join(work, 'a.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    expect(existsSync(join(work, 'new.txt'))).toBe(false);
    // The conversation is told at its next step: what it did to these files no longer holds.
    terminal.type('what now?');
    terminal.keys('Enter');
    await terminal.waitFor(/Noted\.[\s\S]*\[run: /);
    const told = JSON.stringify(server.requests.at(-1)?.body.messages);
    expect(told).toContain('The user undid changes with rho undo: the files are back as they were after turn 0.');
    expect(told).toContain('Written back: a.txt.');
    expect(told).toContain('Removed: new.txt.');
    terminal.type('/exit');
    terminal.keys('Enter');
    await terminal.waitFor(/\[exit 0\]/);
  });
});
