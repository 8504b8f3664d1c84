import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { builtinProfile } from './builtin-profiles.js';
import { checkShellCommand } from './check-shell-command.js';

interface CorpusCase {
  command: string;
  allowed: boolean;
  why: string;
  setup?: string;
  effect?: Record<string, string>;
}

const SETUP_ENV = (home: string): NodeJS.ProcessEnv => ({
  PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  HOME: home,
  GIT_AUTHOR_NAME: 'test',
  GIT_AUTHOR_EMAIL: 'test@example.com',
  GIT_COMMITTER_NAME: 'test',
  GIT_COMMITTER_EMAIL: 'test@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
});
const corpus = JSON.parse(readFileSync(new URL('../test/shell-corpus.json', import.meta.url), 'utf8')) as CorpusCase[];

describe('shell corpus', () => {
  test('has at least 150 lines, 40 of them legitimate', () => {
    expect(corpus.length).toBeGreaterThanOrEqual(150);
    expect(corpus.filter((entry) => entry.allowed).length).toBeGreaterThanOrEqual(40);
  });
  test('has at least as many legitimate lines as abuses', () => {
    expect(corpus.filter((entry) => entry.allowed).length).toBeGreaterThanOrEqual(
      corpus.filter((entry) => !entry.allowed).length,
    );
  });
  test.each(corpus.map((entry) => [entry.command, entry] as const))('%s', async (_command, entry) => {
    // The line is checked in its prepared working directory: patterns expand and `< FILE` resolves there.
    const cwd = mkdtempSync(join(tmpdir(), 'rho-corpus-check-'));
    if (entry.setup) {
      const setup = spawnSync('bash', ['-c', entry.setup], { cwd, env: SETUP_ENV(cwd), encoding: 'utf8' });
      expect(setup.status, `setup failed: ${setup.stderr}`).toBe(0);
    }
    const decision = await checkShellCommand(entry.command.replaceAll('{PORT}', '8080'), { cwd });
    rmSync(cwd, { recursive: true, force: true });
    const summary = decision.allowed ? 'allowed' : `refused (${decision.rule}: ${decision.reason})`;
    expect(summary.startsWith(entry.allowed ? 'allowed' : 'refused'), `${entry.why}: ${summary}`).toBe(true);
  });
});

describe('plans', () => {
  test('operators and pipelines', async () => {
    const decision = await checkShellCommand('cat a | sort && echo ok || echo failed; ls');
    expect(decision).toMatchObject({
      allowed: true,
      plan: {
        steps: [
          { operator: 'start', pipeline: [{ argv: ['cat', 'a'] }, { argv: ['sort'] }] },
          { operator: '&&', pipeline: [{ argv: ['echo', 'ok'] }] },
          { operator: '||', pipeline: [{ argv: ['echo', 'failed'] }] },
          { operator: ';', pipeline: [{ argv: ['ls'] }] },
        ],
      },
    });
  });
  test('words are fully unquoted', async () => {
    const decision = await checkShellCommand(`echo a\\ b "c\\"d\\$" 'e f'$'\\t'g x"y"'z'`);
    expect(decision.allowed && decision.plan.steps[0]?.pipeline[0]?.argv).toEqual([
      'echo',
      'a b',
      'c"d$',
      'e f\tg',
      'xyz',
    ]);
  });
  test('redirections become flags, in order', async () => {
    const first = await checkShellCommand('ls >/dev/null 2>&1');
    expect(first.allowed && first.plan.steps[0]?.pipeline[0]).toEqual({
      argv: ['ls'],
      stdoutToDevNull: true,
      stderrToDevNull: true,
    });
    const second = await checkShellCommand('ls 2>&1 >/dev/null');
    expect(second.allowed && second.plan.steps[0]?.pipeline[0]).toEqual({
      argv: ['ls'],
      stdoutToDevNull: true,
      stderrToStdout: true,
    });
    const third = await checkShellCommand('ls &>/dev/null');
    expect(third.allowed && third.plan.steps[0]?.pipeline[0]).toEqual({
      argv: ['ls'],
      stdoutToDevNull: true,
      stderrToDevNull: true,
    });
  });
  test('locale assignments are carried as env', async () => {
    const decision = await checkShellCommand('LC_ALL=C TZ=UTC date +%H');
    expect(decision.allowed && decision.plan.steps[0]?.pipeline[0]).toEqual({
      argv: ['date', '+%H'],
      env: { LC_ALL: 'C', TZ: 'UTC' },
    });
  });
  test('wrappers: programIndex points at the wrapped program, command is removed', async () => {
    const wrapped = await checkShellCommand('env LC_ALL=C timeout 5 git log -1');
    expect(wrapped.allowed && wrapped.plan.steps[0]?.pipeline[0]?.programIndex).toBe(4);
    expect(wrapped.commands).toEqual([
      ['env', 'LC_ALL=C', 'timeout', '5', 'git', 'log', '-1'],
      ['timeout', '5', 'git', 'log', '-1'],
      ['git', 'log', '-1'],
    ]);
    const command = await checkShellCommand('command -p ls -l');
    expect(command.allowed && command.plan.steps[0]?.pipeline[0]).toEqual({ argv: ['ls', '-l'] });
  });
  test('tilde expands to the home directory only for the current user', async () => {
    const decision = await checkShellCommand('ls ~/x');
    expect(decision.allowed && decision.plan.steps[0]?.pipeline[0]?.argv[1]?.endsWith('/x')).toBe(true);
    expect(await checkShellCommand('ls ~root')).toMatchObject({ allowed: false, rule: 'shell.expansion' });
  });
});

describe('refusals that are not about effects', () => {
  test.each([
    ['ls *.ts', 'shell.glob'],
    ['cat src/{a,b}.ts', 'shell.glob'],
    ['echo $HOME', 'shell.expansion'],
    ['echo "$HOME"', 'shell.expansion'],
    ['less a.txt', 'shell.allowlist'],
    ['cd src && ls', 'shell.allowlist'],
    ['cat <<EOF\n$HOME\nEOF', 'shell.expansion'],
    ['cat <<EOF | wc -l\nhi\nEOF', 'shell.redirect'],
    ['sort < a.txt', 'shell.redirect'],
    ['ls |& cat', 'shell.construct'],
    ['! ls', 'shell.construct'],
    ['if true; then ls; fi', 'shell.construct'],
    ['for f in a b; do cat $f; done', 'shell.construct'],
    ['ls "unterminated', 'shell.parse'],
    ['', 'shell.parse'],
    ['ls \\\n-la', 'shell.parse'],
    ['FOO=1', 'shell.assignment'],
    ['LD_PRELOAD=x.so ls', 'shell.assignment'],
    ['tail -f log.txt | ag x', 'shell.allowlist'],
    ['curl file:///etc/passwd', 'program.curl'],
    ['curl example.com', 'program.curl'],
    ['ping example.com', 'program.ping'],
    ['top', 'program.top'],
    ['git help log', 'program.git'],
  ])('%s is refused by %s', async (command, rule) => {
    const decision = await checkShellCommand(command);
    expect(decision).toMatchObject({ allowed: false, rule });
    expect(decision.allowed === false && decision.reason.length).toBeGreaterThan(10);
  });
});

test('an unrestricted profile runs the line with bash', async () => {
  const profile = builtinProfile('developer');
  const decision = await checkShellCommand('rm -rf build && make', profile ? { profile } : {});
  expect(decision).toMatchObject({
    allowed: true,
    rule: 'shell.unrestricted',
    commands: [['bash', '-c', 'rm -rf build && make']],
  });
});

test('a redirection after the last command of a pipeline applies to that command only', async () => {
  const decision = await checkShellCommand('cat a | wc -l 2>/dev/null');
  expect(decision.allowed && decision.plan.steps[0]?.pipeline).toEqual([
    { argv: ['cat', 'a'] },
    { argv: ['wc', '-l'], stderrToDevNull: true },
  ]);
  expect(await checkShellCommand('cat a | wc -l > out.txt')).toMatchObject({ allowed: false, rule: 'shell.redirect' });
});

describe('validator details', () => {
  test.each([
    ['curl -s -w @fmt.txt http://127.0.0.1:1/', 'program.curl'],
    ['tree -R -H x .', 'program.tree'],
    ['tree -o out.txt', 'program.tree'],
    ['awk \'BEGIN { getline line < "a.txt"; print line }\'', 'program.awk'],
    ['git branch --abbrev newb', 'program.git'],
    ['xargs env', 'program.xargs'],
    ['ss -K dst 10.0.0.1', 'program.ss'],
    ['xmllint -output x.xml a.xml', 'program.xmllint'],
  ])('%s is refused by %s', async (command, rule) => {
    expect(await checkShellCommand(command)).toMatchObject({ allowed: false, rule });
  });
  test.each([
    'git tag -n v2',
    'git tag -n5 --list',
    'git branch --abbrev=7 -v',
    'git tag -n',
    "awk '{ if ($1 < 3) print $1 }' f",
  ])('%s is allowed', async (command) => {
    expect(await checkShellCommand(command)).toMatchObject({ allowed: true });
  });
});
