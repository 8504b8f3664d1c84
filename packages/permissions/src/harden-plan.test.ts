import { describe, expect, test } from 'vitest';
import { checkShellCommand } from './check-shell-command.js';
import { gawkAvailable, hardenPlan, scrubEnvironment } from './harden-plan.js';

async function hardened(command: string): Promise<string[][]> {
  const decision = await checkShellCommand(command);
  if (!decision.allowed) throw new Error(decision.reason);
  return hardenPlan(decision.plan).plan.steps.flatMap((step) => step.pipeline.map((entry) => entry.argv));
}

describe('hardenPlan', () => {
  test('git gets config overrides and --no-ext-diff --no-textconv after the subcommand', async () => {
    const [argv] = await hardened('git -C . diff --stat');
    expect(argv?.slice(0, 7)).toEqual([
      'git',
      '-c',
      'core.fsmonitor=false',
      '-c',
      'core.pager=cat',
      '-c',
      'core.hooksPath=/dev/null',
    ]);
    expect(argv?.slice(-6)).toEqual(['-C', '.', 'diff', '--no-ext-diff', '--no-textconv', '--stat']);
    expect(argv).toContain('--no-optional-locks');
  });
  test('blame gets --no-textconv only; status gets neither', async () => {
    expect((await hardened('git blame a.txt'))[0]?.slice(-3)).toEqual(['blame', '--no-textconv', 'a.txt']);
    expect((await hardened('git status'))[0]?.at(-1)).toBe('status');
  });
  test('wrapped programs are hardened too', async () => {
    const [argv] = await hardened('env LC_ALL=C timeout 5 sed -n 1p f');
    expect(argv).toEqual(['env', 'LC_ALL=C', 'timeout', '5', 'sed', '--sandbox', '-n', '1p', 'f']);
  });
  test('awk runs as gawk --sandbox when gawk exists; curl ignores curlrc and speaks http(s) only', async () => {
    const [awk] = await hardened("awk '{print $1}' f");
    expect(awk?.slice(0, 2)).toEqual(gawkAvailable() ? ['gawk', '--sandbox'] : ['awk', '{print $1}']);
    const [curl] = await hardened('curl -s http://127.0.0.1:1/');
    expect(curl?.slice(0, 6)).toEqual(['curl', '-q', '--proto', '=http,https', '--proto-redir', '=http,https']);
  });
  test('the environment loses variables that change what programs run, and secrets', () => {
    const environment = scrubEnvironment({
      PATH: '/usr/bin',
      HOME: '/home/u',
      LC_ALL: 'C',
      GIT_DIR: '/tmp/evil',
      GIT_EXTERNAL_DIFF: 'x',
      LD_PRELOAD: 'x.so',
      BASH_ENV: 'x',
      PAGER: 'evil',
      TAR_OPTIONS: '--to-command=x',
      OPENAI_API_KEY: 'sk-1',
      GITHUB_TOKEN: 't',
      UNZIP: '-o',
    });
    expect(environment).toEqual({
      PATH: '/usr/bin',
      HOME: '/home/u',
      LC_ALL: 'C',
      PAGER: 'cat',
      GIT_PAGER: 'cat',
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      TERM: 'dumb',
    });
  });
  test('the environment is an allowlist: names no list of secrets knows are dropped too', () => {
    // Each of these passed the old denylist (a name pattern and a list of known variables).
    const environment = scrubEnvironment({
      PATH: 'node_modules/.bin::/usr/local/bin:.:/usr/bin',
      LANG: 'C.UTF-8',
      LC_CTYPE: 'C.UTF-8',
      TZ: 'UTC',
      USER: 'u',
      LOGNAME: 'u',
      ACME_DEPLOY_KEY: 'k1',
      STRIPE_SK: 'sk_live_1',
      SENTRY_DSN: 'https://key@sentry.example/1',
      KUBECONFIG: '/home/u/.kube/config',
      MY_PASS: 'hunter2',
      JAVA_TOOL_OPTIONS: '-javaagent:x.jar',
      https_proxy: 'http://user:pass@proxy:3128',
      TMPDIR: '/var/tmp',
      TERM: 'xterm-256color',
    });
    expect(environment).toEqual({
      PATH: '/usr/local/bin:/usr/bin',
      LANG: 'C.UTF-8',
      LC_CTYPE: 'C.UTF-8',
      TZ: 'UTC',
      USER: 'u',
      LOGNAME: 'u',
      PAGER: 'cat',
      GIT_PAGER: 'cat',
      GIT_TERMINAL_PROMPT: '0',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      TERM: 'dumb',
    });
  });
});
