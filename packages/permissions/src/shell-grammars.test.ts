import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { checkShellCommand } from './check-shell-command.js';
import { hardenPlan } from './harden-plan.js';
import { ALLOWED_PROGRAMS } from './internal/program-rules.js';

let root: string;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'rho-grammar-'));
  for (const name of ['a.ts', 'b.ts', 'B.ts', '.h.ts', 'x y.ts', 'ä.ts', '_z.ts', 'data.csv'])
    writeFileSync(join(root, name), `${name}\n`);
  mkdirSync(join(root, 'sub'));
  writeFileSync(join(root, 'sub', 'c.ts'), 'c\n');
  mkdirSync(join(root, '.dot'));
  writeFileSync(join(root, '.dot', 'd.ts'), 'd\n');
  symlinkSync('/etc/hostname', join(root, 'outside-link'));
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

async function argvOf(command: string, cwd: string | null = root): Promise<string[]> {
  const decision = await checkShellCommand(command, cwd === null ? {} : { cwd });
  if (!decision.allowed) throw new Error(`${command}: ${decision.reason}`);
  return decision.plan.steps[0]?.pipeline[0]?.argv ?? [];
}

async function refusal(command: string, cwd: string | null = root): Promise<{ rule: string; reason: string }> {
  const decision = await checkShellCommand(command, cwd === null ? {} : { cwd });
  if (decision.allowed) throw new Error(`${command} was allowed: ${JSON.stringify(decision.plan)}`);
  return { rule: decision.rule, reason: decision.reason };
}

describe('file name patterns are expanded as bash expands them', () => {
  // Each pattern is expanded by rho and by real bash (LC_ALL=C: byte order, the order rho uses) in
  // the same directory; the argv must be identical.
  test.each([
    '*',
    '*.ts',
    '.*',
    '?.ts',
    '[ab].ts',
    '[!a].ts',
    '[^a].ts',
    '[[:upper:]]*',
    'sub/*',
    '*/',
    '*/*.ts',
    '**/*.ts',
    '*.none',
    'sub/*.none',
    '\\*.ts',
    "'*'.ts",
    '"x "*',
    'x\\ *',
    '.d*/*',
    '[a',
    '*]',
    'nothere/*',
    '.*/d.ts',
    '_*',
    '*.ts *.csv',
  ])('%s', async (pattern) => {
    const bash = spawnSync('bash', ['-c', `printf '%s\\n' ${pattern}`], {
      cwd: root,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LC_ALL: 'C' },
      encoding: 'utf8',
    });
    expect(bash.status).toBe(0);
    const expected = bash.stdout.split('\n').slice(0, -1);
    expect((await argvOf(`printf '%s\\n' ${pattern}`)).slice(2)).toEqual(expected);
  });

  test('without the working directory a pattern is refused, not guessed', async () => {
    expect(await refusal('ls *.ts', null)).toMatchObject({ rule: 'shell.glob' });
  });

  test.each(['ls /etc/*', 'ls ../*', 'ls sub/../../*', 'cat ~/*'])(
    '%s leaves the working directory and is refused',
    async (command) => {
      expect((await refusal(command)).rule).toBe('shell.glob');
    },
  );

  test('brace expansion stays refused', async () => {
    expect((await refusal('cat {a,b}.ts')).rule).toBe('shell.glob');
  });

  test('the expanded argv is what the validator judges (a file named like an option)', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-grammar-opt-'));
    writeFileSync(join(directory, '-opwned'), '');
    writeFileSync(join(directory, 'a.txt'), 'a\n');
    const refused = await refusal('sort *', directory);
    expect(refused.rule).toBe('program.sort');
    expect(refused.reason).toContain('-o');
    rmSync(directory, { recursive: true, force: true });
  });
});

describe('standard input from a file, a here-string or a here-document', () => {
  test('< FILE inside the working directory becomes the resolved file', async () => {
    const decision = await checkShellCommand('tr -d x < data.csv', { cwd: root });
    expect(decision.allowed && decision.plan.steps[0]?.pipeline[0]?.stdin).toEqual({ file: join(root, 'data.csv') });
  });
  test.each([
    ['sort < /etc/hostname', 'shell.redirect'],
    ['sort < ../x', 'shell.redirect'],
    ['sort < outside-link', 'shell.redirect'],
    ['sort < sub', 'shell.redirect'],
    ['sort < missing.txt', 'shell.redirect'],
    ['sort 3< data.csv', 'shell.redirect'],
  ])('%s is refused', async (command, rule) => {
    expect((await refusal(command)).rule).toBe(rule);
  });
  test('without the working directory < FILE is refused', async () => {
    expect((await refusal('sort < data.csv', null)).rule).toBe('shell.redirect');
  });
  test('here-strings and literal here-documents are the text bash would give', async () => {
    const cases: [string, string][] = [
      ["cat <<< 'a b'", 'a b\n'],
      ['cat <<< "x"', 'x\n'],
      ["cat <<'EOF'\n$HOME `x` \\n\nEOF", '$HOME `x` \\n\n'],
      ['cat <<EOF\nplain\nEOF', 'plain\n'],
      ['cat <<-EOF\n\t\tindented\n\tEOF', 'indented\n'],
    ];
    for (const [command, text] of cases) {
      const decision = await checkShellCommand(command);
      expect(decision.allowed && decision.plan.steps[0]?.pipeline[0]?.stdin, command).toEqual({ text });
      const bash = spawnSync('bash', ['-c', command], { encoding: 'utf8' });
      expect(bash.stdout, command).toBe(text);
    }
  });
  test.each(['cat <<EOF\n$HOME\nEOF', 'cat <<EOF\n`id`\nEOF', 'cat <<< "$HOME"', 'cat <<< $(id)'])(
    '%s (an expansion) is refused',
    async (command) => {
      expect((await refusal(command)).rule).toBe('shell.expansion');
    },
  );
});

describe('old-style and positional grammars', () => {
  test('tar runs the dashed form of an old-style bundle, exactly as checked', async () => {
    expect(await argvOf('tar tvf arch.tar')).toEqual(['tar', '-t', '-v', '-f', 'arch.tar']);
    expect(await argvOf('tar xOf arch.tar x/y.txt')).toEqual(['tar', '-x', '-O', '-f', 'arch.tar', 'x/y.txt']);
  });
  test.each([
    ['tar tvfI arch.tar ./unz.sh', 'program.tar'],
    ['tar tfI arch.tar ./unz.sh', 'program.tar'],
    ['tar tvfF arch.tar ./unz.sh', 'program.tar'],
    ['tar tg snap arch.tar', 'program.tar'],
    ['tar xf arch.tar', 'program.tar'],
    ['tar tf host:arch.tar', 'program.tar'],
    ['unzip z.zip -x -l', 'program.unzip'],
    ['unzip -l z.zip -d out', 'program.unzip'],
    ['unzip -l z.zip -v', 'program.unzip'],
    ['unzip -tT z.zip', 'program.unzip'],
    ['unzip -lM z.zip', 'program.unzip'],
    ['ps eww', 'program.ps'],
    ['ps -o pid,environ', 'program.ps'],
    ['ps -uxe', 'program.ps'],
    ['printenv OPENAI_API_KEY', 'program.printenv'],
    ['env -i', 'program.env'],
    ['git describe --dirty', 'program.git'],
    ['git --help log', 'program.git'],
    ['git log --help', 'program.git'],
    ['git log --he', 'program.git'],
    ['git -C . log -1 --help-all', 'program.git'],
    ['curl -H @h.txt http://x/', 'program.curl'],
    ['curl -b jar.txt http://x/', 'program.curl'],
    ['curl --unix-socket /run/docker.sock http://x/', 'program.curl'],
    ['rg -z x', 'program.rg'],
    ['rg --search-zip x', 'program.rg'],
    ['rg --pre cat x', 'program.rg'],
    ['rg --hostname-bin ./x x', 'program.rg'],
    ['jq -n env', 'program.jq'],
    ['jq -n "\\$ENV"', 'program.jq'],
    ['jq -n \'import "m" as m; 1\'', 'program.jq'],
    ['yq -n env', 'program.yq'],
    ["yq --arg x y -n '$ENV'", 'program.yq'],
    ['ps aux --format environ', 'program.ps'],
    ['awk \'BEGIN{print ENVIRON["HOME"]}\'', 'program.awk'],
    ['strings @opts', 'program.strings'],
    ['echo env | xargs jq -n', 'program.xargs'],
    ['echo eww | xargs ps', 'program.xargs'],
    ['nslookup', 'program.nslookup'],
    ['git log --no-such-option', 'program.git'],
    ['git log --onel', 'program.git'],
    ['git status --porcelai', 'program.git'],
    ['git diff -K', 'program.git'],
    ['git show --show-signature HEAD', 'program.git'],
    ['git rev-parse --parseopt', 'program.git'],
    ['git annotate --output x a.txt', 'program.git'],
    ['cat /proc/1/environ', 'shell.environ'],
    ['grep -a KEY /proc//1/task/1/environ', 'shell.environ'],
    ['cat ../../../../../../proc/self/environ', 'shell.environ'],
  ])('%s is refused by %s', async (command, rule) => {
    expect((await refusal(command)).rule).toBe(rule);
  });
  test.each([
    'git log -p -3 --stat --no-color --format=%h --since=2000-01-01 --author=x -Sfoo -G bar --diff-filter=M -M50% --follow -- a.txt',
    'git diff --cached --word-diff -U5 --no-ext-diff HEAD~1',
    'git status -sb -uno --porcelain=v2',
    'git grep -n -i -3 --heading -e x',
    'git show -h',
    'git blame -L 1,2 a.txt',
    'git ls-files -s --others --exclude-standard',
    'git rev-parse --abbrev-ref --symbolic-full-name HEAD',
    'git shortlog -sn --no-merges HEAD',
  ])('%s is allowed (git read options are written out)', async (command) => {
    const decision = await checkShellCommand(command);
    expect(decision.allowed, decision.allowed ? '' : decision.reason).toBe(true);
  });
  test.each([
    'unzip -l z.zip -x d/e.txt -l',
    'ps aux --sort -rss',
    'ps aux',
    'ps -ef',
    'ps -u root -o pid,comm',
    'printenv HOME LC_ALL',
    'jq .env f.json',
    'git describe --always',
  ])('%s is allowed', async (command) => {
    expect((await checkShellCommand(command)).allowed).toBe(true);
  });
});

describe('deny by default', () => {
  // Programs whose every word is text (echo, printf, true, false) have no options to refuse.
  const programs = ALLOWED_PROGRAMS.filter((program) => !['echo', 'printf', 'true', 'false'].includes(program));
  test.each(programs)('%s refuses an option it does not know', async (program) => {
    const decision = await checkShellCommand(`${program} --rho-no-such-option x`);
    expect(decision.allowed, program).toBe(false);
  });
});

describe('git hardening neutralises the help viewer even without the validator', () => {
  test('hardened `git log --help` does not run the repository man.<tool>.cmd; the bare one does', async () => {
    const run = (directory: string, argv: string[], env: NodeJS.ProcessEnv) =>
      spawnSync(argv[0] as string, argv.slice(1), { cwd: directory, env, encoding: 'utf8', input: '' });
    const repository = () => {
      const directory = mkdtempSync(join(tmpdir(), 'rho-grammar-git-'));
      writeFileSync(join(directory, 'touch.sh'), '#!/bin/sh\ntouch "$(dirname "$0")/pwned"\n');
      chmodSync(join(directory, 'touch.sh'), 0o755);
      const setup = spawnSync(
        'bash',
        ['-c', `git init -q . && git config man.viewer evil && git config man.evil.cmd ${join(directory, 'touch.sh')}`],
        { cwd: directory, encoding: 'utf8' },
      );
      expect(setup.status, setup.stderr).toBe(0);
      return directory;
    };
    const decision = await checkShellCommand('git log -1');
    if (!decision.allowed) throw new Error(decision.reason);
    const hardened = hardenPlan(decision.plan);
    const command = hardened.plan.steps[0]?.pipeline[0];
    const argv = command?.argv ?? [];
    // What a validator bypass would run: --help straight after the subcommand.
    const bypass = [...argv.slice(0, argv.indexOf('log') + 1), '--help'];
    const bare = repository();
    run(bare, ['git', 'log', '--help'], { ...process.env, GIT_CONFIG_NOSYSTEM: '1' });
    expect(existsSync(join(bare, 'pwned')), 'the planted viewer should run without hardening').toBe(true);
    const protectedRepository = repository();
    run(protectedRepository, bypass, { ...hardened.env(process.env), ...command?.env });
    expect(existsSync(join(protectedRepository, 'pwned')), `hardened ${bypass.join(' ')} ran the planted viewer`).toBe(
      false,
    );
    expect(command?.env).toMatchObject({ GIT_CONFIG_NOSYSTEM: '1' });
    rmSync(bare, { recursive: true, force: true });
    rmSync(protectedRepository, { recursive: true, force: true });
  });
});

describe('filter and diff drivers of the repository are switched off', () => {
  test('git diff runs the planted clean filter bare, and not as planned in the working directory', async () => {
    const repository = () => {
      const directory = mkdtempSync(join(tmpdir(), 'rho-grammar-filter-'));
      const setup = spawnSync(
        'bash',
        [
          '-c',
          [
            'git init -q . && printf "a\\n" > a.txt && git add a.txt',
            'git -c user.email=t@example.com -c user.name=t commit -q -m first',
            `git config filter.planted.clean 'touch ${join(directory, 'pwned')}; cat'`,
            `git config filter.other.process 'touch ${join(directory, 'pwned')}'`,
            "printf '*.txt filter=planted\\n' > .gitattributes && printf 'b\\n' >> a.txt",
          ].join(' && '),
        ],
        { cwd: directory, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' },
      );
      expect(setup.status, setup.stderr).toBe(0);
      return directory;
    };
    const bare = repository();
    spawnSync('git', ['diff'], { cwd: bare, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' });
    expect(existsSync(join(bare, 'pwned')), 'the planted filter should run without the override').toBe(true);

    const directory = repository();
    const decision = await checkShellCommand('git diff', { cwd: directory });
    if (!decision.allowed) throw new Error(decision.reason);
    const hardened = hardenPlan(decision.plan);
    const command = hardened.plan.steps[0]?.pipeline[0];
    const argv = command?.argv ?? [];
    expect(argv).toEqual(expect.arrayContaining(['filter.planted.clean=', 'filter.other.process=']));
    const result = spawnSync(argv[0] as string, argv.slice(1), {
      cwd: directory,
      env: { ...hardened.env(process.env), ...command?.env },
      encoding: 'utf8',
    });
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain('+b');
    expect(existsSync(join(directory, 'pwned')), `${argv.join(' ')} ran the planted filter`).toBe(false);
    rmSync(bare, { recursive: true, force: true });
    rmSync(directory, { recursive: true, force: true });
  });

  test("git is refused where the repository config cannot be read (a remote backend's directory)", async () => {
    // A working directory that is not on this machine (as with the Daytona backend): the drivers
    // are unknown, so the command is refused rather than run with drivers left on.
    const remote = join(tmpdir(), `rho-not-here-${process.pid}-${Date.now()}`, 'project');
    const decision = await checkShellCommand('git diff', { cwd: remote });
    expect(decision.allowed).toBe(false);
    if (!decision.allowed) expect(decision.reason).toMatch(/cannot be read on this machine/);
    const local = mkdtempSync(join(tmpdir(), 'rho-grammar-nogit-'));
    // A local directory that is not a repository has no drivers: git runs (and says so itself).
    expect((await checkShellCommand('git status', { cwd: local })).allowed).toBe(true);
    rmSync(local, { recursive: true, force: true });
  });
});

describe('readonly audit, round three: curl request floods', () => {
  test.each([
    "curl 'http://127.0.0.1:1/[1-100000000]'",
    "curl -s 'http://127.0.0.1:1/page[1-1000:1]/[a-z]'",
    "curl --url 'http://127.0.0.1:1/[0-9]'",
    'curl --retry 1000000 --retry-delay 0 --retry-all-errors http://127.0.0.1:1/',
    'curl --retry 11 http://127.0.0.1:1/',
  ])('%s is refused (one command, a flood of requests)', async (command) => {
    const decision = await checkShellCommand(command, { cwd: root });
    expect(decision.allowed).toBe(false);
    if (!decision.allowed) {
      expect(decision.rule).toBe('program.curl');
      expect(decision.reason).toMatch(/-g|--retry 10/);
    }
  });

  test.each([
    "curl -g 'http://127.0.0.1:1/[1-3]'",
    "curl --globoff 'http://127.0.0.1:1/[1-3]'",
    "curl 'http://127.0.0.1:1/{a,b}'",
    "curl 'http://[::1]:8080/x'",
    'curl --retry 3 http://127.0.0.1:1/',
  ])('%s is allowed', async (command) => {
    const decision = await checkShellCommand(command, { cwd: root });
    expect(decision.allowed, decision.allowed ? '' : decision.reason).toBe(true);
  });
});

describe('readonly audit, round three: checking a line takes linear time', () => {
  test('a pattern with many stars against a long name is decided at once (it took 198 s, the event loop frozen)', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-glob-redos-'));
    try {
      writeFileSync(join(directory, 'a'.repeat(60)), '');
      for (const pattern of [`${'*a'.repeat(25)}*b`, `${'*'.repeat(40)}b`, `${'?*'.repeat(30)}b`]) {
        const decision = await checkShellCommand(`ls ${pattern}`, { cwd: directory });
        expect(decision.allowed && decision.plan.steps[0]?.pipeline[0]?.argv[1]).toBe(pattern);
      }
      const brackets = await checkShellCommand(`curl http://127.0.0.1:1/${'['.repeat(99_000)}`, { cwd: directory });
      expect(brackets.allowed).toBe(false);
      const quoted = await checkShellCommand(`curl 'http://127.0.0.1:1/${'['.repeat(99_000)}'`, { cwd: directory });
      expect(quoted.allowed).toBe(true);
      await checkShellCommand(`ls ${'[[:'.repeat(1300)}`, { cwd: directory });
      for (const line of ['ls' + ' && ls'.repeat(5000), `${'env '.repeat(5000)}ls`, `${'timeout 1 '.repeat(5000)}ls`]) {
        const deep = await checkShellCommand(line, { cwd: directory });
        expect(deep.allowed).toBe(false);
        if (!deep.allowed) expect(deep.rule).toBe('shell.too-complex');
      }
      const match = await checkShellCommand(`ls ${'*a'.repeat(25)}*`, { cwd: directory });
      expect(match.allowed && match.plan.steps[0]?.pipeline[0]?.argv[1]).toBe('a'.repeat(60));
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }, 30_000);
});

describe('issue 32: one line, bounded processes and requests', () => {
  test.each([
    ['ls | xargs -P 0 -n 1 wc', /xargs -P 0 runs as many processes at once as it can; use -P 8 or fewer/],
    ['ls | xargs -P0 wc', /xargs -P 0 runs as many/],
    ['ls | xargs --max-procs=0 wc', /xargs -P 0 runs as many/],
    ['ls | xargs -P 9 -n 1 wc', /xargs -P 9 runs 9 processes at once; use -P 8 or fewer/],
    ['ls | xargs -P 300 -n 1 wc', /xargs -P 300 runs 300 processes/],
    ["curl -s 'http://127.0.0.1:1/{a,b,c,d,e}{0,1,2,3,4,5,6,7,8,9}'", /into 50 requests, more than the 10/],
    ["curl 'http://127.0.0.1:1/{a,b,c}/{d,e,f}/{g,h}'", /into 18 requests/],
    ["curl 'http://127.0.0.1:1/{a,b,c,d,e,f}' 'http://127.0.0.1:1/{a,b,c,d,e}'", /into 11 requests/],
    ['curl -o page.html http://127.0.0.1:1/', /only -o \/dev\/null \(to discard it\) is allowed/],
    ['curl --output=/etc/passwd http://127.0.0.1:1/', /only -o \/dev\/null/],
    ['find . -exec rm {} +', /find -exec runs its command with file names nobody checked; .* not rm/],
    ['find . -execdir sed -i s/a/b/ {} \\;', /not sed/],
    ['find . -exec sh -c "id" \\;', /not sh/],
    ['find . -exec wc -l {}', /find -exec needs a command ended by/],
    ['find . -exec {} \\;', /find -exec needs a command/],
    ['find . -ok cat {} \\;', /find -ok runs a command for each file/],
  ])('%s is refused with the reason', async (command, reason) => {
    const decision = await checkShellCommand(command, { cwd: root });
    expect(decision.allowed).toBe(false);
    if (!decision.allowed) expect(decision.reason).toMatch(reason);
  });

  test.each([
    'ls | xargs -P 8 -n 1 wc -l',
    'ls | xargs -P 2 wc -l',
    "curl 'http://127.0.0.1:1/{a,b}'",
    "curl 'http://127.0.0.1:1/{a,b}{0..9}'",
    "curl -g 'http://127.0.0.1:1/{a,b,c,d,e}{0,1,2,3,4,5,6,7,8,9}'",
    "curl -o /dev/null -w '%{http_code}' http://127.0.0.1:1/",
    "curl -s --output /dev/null -w '%{http_code}\\n' http://127.0.0.1:1/",
    'find . -exec wc -l {} +',
    "find . -name '*.ts' -exec grep -n TODO {} \\;",
    'find . -type f -execdir head -1 {} +',
    "bc <<< '1+2'",
    'echo 2^10 | bc -l',
    'git rev-parse HEAD',
    'git rev-parse --show-toplevel',
    'git rev-parse --abbrev-ref HEAD',
    'cat {}',
  ])('%s is allowed', async (command) => {
    const decision = await checkShellCommand(command, { cwd: root });
    expect(decision.allowed, decision.allowed ? '' : decision.reason).toBe(true);
  });

  test('{} is a word of its own; a brace list still is not expanded', async () => {
    expect(await argvOf('find . -exec wc -l {} +')).toEqual(['find', '.', '-exec', 'wc', '-l', '{}', '+']);
    expect((await checkShellCommand('cat {a,b}', { cwd: root })).allowed).toBe(false);
  });
});
