import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage } from '@rho/core';
import { startLoopbackServer } from '@rho/core/testing';
import type { LoopbackServer } from '@rho/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

// Issue 32's proven reads and git filters, through the real CLI: what an agent can see is the read
// view (the working directory, the system directories, read_paths), with rho's home and the
// sessions hidden and secret files masked; every git config source that names a program is
// neutralised; the developer shell writes only its working directory.

const bwrap = spawnSync('bwrap', ['--version']).status === 0;

let server: LoopbackServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const SECRETS = {
  env: 'sk-env-SECRET-1f3a',
  header: 'SECRET-TOKEN-8c2d',
  database: 'db-SECRET-77e1',
  trace: 'trace-SECRET-5b90',
};

const GIT_ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

function git(cwd: string, ...args: string[]): void {
  const result = spawnSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], {
    cwd,
    env: GIT_ENV,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
}

function workspace(): { root: string; home: string; work: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-cli-view-')));
  const work = join(root, 'work');
  const home = join(root, 'rho-home');
  mkdirSync(work);
  mkdirSync(join(home, 'sessions', 'another-session'), { recursive: true });
  writeFileSync(
    join(home, 'databases.yaml'),
    `databases:\n  prod:\n    type: postgres\n    host: 127.0.0.1\n    database: postgres\n    user: postgres\n    password: ${SECRETS.database}\n`,
  );
  writeFileSync(join(home, 'sessions', 'another-session', 'trace.jsonl'), `{"content":"${SECRETS.trace}"}\n`);
  return { root, home, work };
}

function toolResults(): string[] {
  const last = server!.requests.at(-1)!.body as { messages: ChatMessage[] };
  return last.messages.filter((message) => message.role === 'tool').map((message) => String(message.content));
}

const bash = (command: string) => ({ name: 'bash', arguments: JSON.stringify({ command }) });
const tool = (name: string, args: Record<string, unknown>) => ({ name, arguments: JSON.stringify(args) });

async function runCalls(
  calls: { name: string; arguments: string }[],
  options: { home: string; work: string; profile: string },
): Promise<string[]> {
  server = await startLoopbackServer({
    steps: [
      { type: 'response', toolCalls: calls },
      { type: 'response', text: 'Done.' },
    ],
  });
  const outcome = await runRho(['--base-url', server.url, '--profile', options.profile, '-y', 'Look around.'], {
    env: { RHO_HOME: options.home },
    cwd: options.work,
  });
  expect(outcome.code, outcome.stderr).toBe(0);
  const results = toolResults();
  expect(results).toHaveLength(calls.length);
  return results;
}

describe.skipIf(!bwrap)('the read view through the real CLI', () => {
  it('readonly: no secret reaches the model through the shell or the file tools, and ordinary reads still work', async () => {
    const { home, work } = workspace();
    writeFileSync(join(work, '.env'), `RHO_TEST_KEY=${SECRETS.env}\n`);
    writeFileSync(join(work, '.env.example'), 'RHO_TEST_KEY=\n');
    writeFileSync(join(work, 'notes.txt'), 'ordinary notes\n');
    git(work, 'init', '-q');
    appendFileSync(
      join(work, '.git', 'config'),
      `[http "https://example.com/"]\n\textraheader = AUTHORIZATION: basic ${SECRETS.header}\n`,
    );
    const shadow = readFileSync('/etc/shadow', 'utf8').split('\n')[0]!;
    // What `cmp -l` prints of the secret itself: its bytes in octal.
    const leakedBytes = spawnSync('cmp', ['-l', '.env', 'notes.txt'], { cwd: work, encoding: 'utf8' })
      .stdout.split('\n')
      .slice(0, 3)
      .join('\n');
    expect(leakedBytes.length).toBeGreaterThan(0);
    const calls = [
      bash('cat .env'),
      bash(`grep -r SECRET ${home}/sessions`),
      bash(`grep password ${home}/databases.yaml`),
      bash(`cat ${home}/databases.yaml`),
      bash('head -1 /etc/shadow'),
      bash('git config --get-urlmatch http.extraheader https://example.com/'),
      bash("jq -n --rawfile x .env '$x'"),
      bash('date -f .env'),
      bash('cmp -l .env notes.txt'),
      bash('xargs -a .env echo'),
      tool('read', { path: '.env' }),
      tool('read', { path: `${home}/databases.yaml` }),
      tool('grep', { pattern: 'SECRET', path: home }),
      tool('grep', { pattern: 'SECRET', path: '.' }),
      tool('grep', { pattern: 'SECRET', path: `${home}/sessions` }),
      // Ordinary reads keep working.
      bash('cat notes.txt .env.example'),
      tool('read', { path: 'notes.txt' }),
      bash('git status --short'),
      bash('head -1 /etc/passwd'),
    ];
    const results = await runCalls(calls, { home, work, profile: 'readonly' });
    for (const [index, result] of results.entries()) {
      for (const secret of [...Object.values(SECRETS), shadow, leakedBytes])
        expect(result, `${calls[index]!.arguments} leaked ${secret}`).not.toContain(secret);
    }
    expect(results[10]).toMatch(/Refused: .*named like a file that holds secrets/);
    expect(results[11]).toMatch(/Refused: .*hidden from every session/);
    expect(results[12]).toMatch(/Refused: /);
    expect(results[15]).toContain('ordinary notes');
    expect(results[15]).toContain('RHO_TEST_KEY=');
    expect(results[16]).toContain('ordinary notes');
    expect(results[17]).toContain('.env.example');
    expect(results[18]).toContain('root:');

    const policy = await runRho(['policy', 'check', '--read', join(home, 'databases.yaml'), '--json'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(policy.code).toBe(1);
    expect(JSON.parse(policy.stdout)).toMatchObject({ kind: 'read', allowed: false, rule: 'read.hidden' });
    const env = await runRho(['policy', 'check', '--read', '.env'], { env: { RHO_HOME: home }, cwd: work });
    expect(env.stdout).toMatch(/REFUSED \(read, profile readonly\)\nrule: +read\.secret/);
    const notes = await runRho(['policy', 'check', '--read', 'notes.txt', '--json'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(JSON.parse(notes.stdout)).toMatchObject({ allowed: true, rule: 'read.working-dir' });
  });

  it('a filter planted in .git/config.worktree or in a submodule config does not run under git diff or git blame', async () => {
    const { root, home, work } = workspace();
    // A submodule, whose own config (in the superproject's .git/modules) names a filter.
    const origin = join(root, 'sub-origin');
    mkdirSync(origin);
    git(origin, 'init', '-q');
    writeFileSync(join(origin, '.gitattributes'), '* filter=evil\n');
    writeFileSync(join(origin, 's.txt'), 'sub line\n');
    git(origin, 'add', '-A');
    git(origin, 'commit', '-qm', 'sub');
    git(work, 'init', '-q');
    writeFileSync(join(work, '.gitattributes'), '*.txt filter=evil\n');
    writeFileSync(join(work, 'a.txt'), 'line one\n');
    git(work, 'add', '-A');
    git(work, 'commit', '-qm', 'one');
    git(work, '-c', 'protocol.file.allow=always', 'submodule', '-q', 'add', origin, 'sub');
    git(work, 'commit', '-qm', 'sub');
    // The worktree config is read once extensions.worktreeConfig is set; `git config --local` does not show it.
    git(work, 'config', 'extensions.worktreeConfig', 'true');
    writeFileSync(join(work, '.git', 'config.worktree'), '[filter "evil"]\n\tclean = sed 1iFILTER-RAN-WORKTREE\n');
    appendFileSync(
      join(work, '.git', 'modules', 'sub', 'config'),
      '[filter "evil"]\n\tclean = sed 1iFILTER-RAN-SUBMODULE\n',
    );
    appendFileSync(join(work, 'a.txt'), 'line two\n');
    appendFileSync(join(work, 'sub', 's.txt'), 'sub line two\n');
    // Proof that the plants work: git itself, without rho, runs both filters.
    const plain = spawnSync('git', ['diff', '--submodule=diff'], { cwd: work, env: GIT_ENV, encoding: 'utf8' });
    expect(plain.stdout).toContain('FILTER-RAN-WORKTREE');
    expect(plain.stdout).toContain('FILTER-RAN-SUBMODULE');

    const calls = [
      bash('git diff'),
      bash('git diff --submodule=diff'),
      bash('git blame a.txt'),
      bash('git -C sub diff'),
      bash('git -C sub blame s.txt'),
      bash('git status'),
    ];
    const results = await runCalls(calls, { home, work, profile: 'readonly' });
    for (const [index, result] of results.entries()) expect(result, calls[index]!.arguments).not.toMatch(/FILTER-RAN/);
    expect(results[0]).toContain('+line two');
    expect(results[1]).toContain('+sub line two');
    expect(results[2]).toContain('line one');
  });

  it('developer: bash writes the working directory and nowhere else, and sees no secret', async () => {
    const { root, home, work } = workspace();
    writeFileSync(join(work, '.env'), `RHO_TEST_KEY=${SECRETS.env}\n`);
    const outside = join(root, 'outside');
    mkdirSync(outside);
    const calls = [
      bash(`echo inside > made.txt && cat made.txt`),
      bash(
        `echo escaped > ${outside}/escaped.txt; echo escaped > ${home}/escaped.txt; echo escaped > /var/tmp/rho-view-escaped-${process.pid}; ls ${outside}`,
      ),
      bash(`cat .env ${home}/databases.yaml; grep -r SECRET ${home} /root 2>&1 | head -3; env`),
    ];
    const results = await runCalls(calls, { home, work, profile: 'developer' });
    expect(results[0]).toContain('inside');
    expect(readFileSync(join(work, 'made.txt'), 'utf8')).toBe('inside\n');
    expect(existsSync(join(outside, 'escaped.txt'))).toBe(false);
    expect(existsSync(join(home, 'escaped.txt'))).toBe(false);
    expect(existsSync(`/var/tmp/rho-view-escaped-${process.pid}`)).toBe(false);
    for (const secret of Object.values(SECRETS)) expect(results[2]).not.toContain(secret);
  });
});
