import { spawn } from 'node:child_process';
import { readlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createLocalBackend, type ExecutionBackend, type SpawnOptions } from '@rho/core';
import { builtinProfile, explainPolicy, sandboxWrapper } from '@rho/permissions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBashTool } from './bash-tool.js';
import { fsTools } from './fs-tools.js';
import { restrictedShellGate } from './restricted-shell-gate.js';
import { call, contextFor, temporaryDirectory } from './test-support/harness.js';

const profile = builtinProfile('readonly')!;
const sandboxed = createBashTool({ mode: 'restricted', gate: restrictedShellGate(profile) });
const unsandboxed = createBashTool({ mode: 'restricted', gate: restrictedShellGate(profile, { sandbox: 'off' }) });
const output = (content: string): string => (JSON.parse(content) as { output: string }).output;

/** Skips where bubblewrap cannot run; under CI it must, so the test fails instead. */
async function requireSandbox(test: { skip: (note: string) => void }): Promise<void> {
  const wrapper = await sandboxWrapper();
  if (wrapper.available) return;
  if (process.env['CI'] === 'true')
    throw new Error(`CI must run the sandbox tests: ${wrapper.unavailableReason ?? ''}`);
  test.skip('bubblewrap is not available here');
}
let dir: string;
let cleanup: () => Promise<void>;

beforeEach(async () => {
  ({ dir, cleanup } = await temporaryDirectory());
});
afterEach(async () => {
  await cleanup();
});

describe('restrictedShellGate', () => {
  it('refuses writes with the policy reason, before anything runs', async () => {
    await writeFile(join(dir, 'keep.txt'), 'x');
    for (const command of ['rm keep.txt', 'cat keep.txt > copy.txt', 'ls; touch new.txt', 'echo `touch new.txt`']) {
      const result = await call(sandboxed, { command }, contextFor(dir));
      expect(result.success).toBe(false);
      expect(result.content).toMatch(/^Command blocked: \S/);
    }
    expect((await call(unsandboxed, { command: 'ls' }, contextFor(dir))).content).toContain('keep.txt');
  });

  it('runs allowed commands as the checked argv, with the scrubbed environment', async () => {
    process.env['PAGER'] = 'evil-pager';
    try {
      const result = await call(unsandboxed, { command: 'printenv PAGER' }, contextFor(dir));
      expect(output(result.content)).toBe('cat\n');
    } finally {
      delete process.env['PAGER'];
    }
  });

  it('runs inside bubblewrap when available: a private /tmp that still shows the working directory', async (test) => {
    await requireSandbox(test);
    const marker = await mkdtemp(join(tmpdir(), 'rho-outside-sandbox-'));
    try {
      // Ask for the two entries by name: a listing of the whole /tmp can be longer than the
      // output the tool keeps (head and tail) on a busy machine.
      const command = `ls -d /tmp/${basename(dir)} /tmp/${basename(marker)}`;
      const inside = output((await call(sandboxed, { command }, contextFor(dir))).content);
      expect(inside).toContain(`/tmp/${basename(dir)}`);
      expect(inside).toMatch(new RegExp(`cannot access '/tmp/${basename(marker)}'`));
      const outside = output((await call(unsandboxed, { command }, contextFor(dir))).content);
      expect(outside.split('\n')).toContain(`/tmp/${basename(marker)}`);
    } finally {
      await rm(marker, { recursive: true, force: true });
    }
  });

  it('the sandbox hides the processes outside it and their environment (ps, /proc)', async (test) => {
    await requireSandbox(test);
    // Stands for rho: a process outside the sandbox with a secret in its environment.
    const outsider = spawn('sleep', ['30.5'], {
      env: { ...process.env, FOO_TOKEN: 'tok-outside-7781' },
      stdio: 'ignore',
    });
    try {
      const pid = String(outsider.pid);
      const listed = (text: string): string[] => text.split('\n').map((line) => line.trim().split(/\s+/)[0] ?? '');
      const insidePs = output((await call(sandboxed, { command: 'ps -eo pid,args' }, contextFor(dir))).content);
      expect(listed(insidePs)).not.toContain(pid);
      expect(listed(insidePs)).not.toContain(String(process.pid));
      // The sandbox's own init, ps, and nothing else.
      expect(insidePs.trim().split('\n').length).toBeLessThanOrEqual(4);
      // Its /proc entry does not exist either (the validators refuse /proc/PID/environ by name; the
      // sandbox alone hides it too, see the permissions package's sandbox tests).
      const insideCmdline = output(
        (await call(sandboxed, { command: `cat /proc/${pid}/cmdline` }, contextFor(dir))).content,
      );
      expect(insideCmdline).toContain('No such file');
      expect(insideCmdline).not.toContain('30.5');
      // The same commands without the sandbox do see them: the checks above can fail.
      // Pids only: a busy machine's `ps -eo pid,args` passes the tool's output cap, which cuts the middle.
      expect(listed(output((await call(unsandboxed, { command: 'ps -eo pid' }, contextFor(dir))).content))).toContain(
        pid,
      );
      expect(
        output((await call(unsandboxed, { command: `cat /proc/${pid}/cmdline` }, contextFor(dir))).content),
      ).toContain('30.5');
    } finally {
      outsider.kill('SIGKILL');
    }
  });

  it('only the network program of a line gets the network: curl reaches the host, the next process of its pipeline has none', async (test) => {
    await requireSandbox(test);
    let requests = 0;
    const server: Server = createServer((_request, response) => {
      requests += 1;
      response.end('hello-from-the-host\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const hostNet = readlinkSync('/proc/self/ns/net');
      expect(output((await call(sandboxed, { command: `curl -s ${url}` }, contextFor(dir))).content)).toBe(
        'hello-from-the-host\n',
      );
      // ls runs in the same line as curl, and in a network namespace of its own.
      const result = await call(sandboxed, { command: `curl -s ${url} | ls -l /proc/self/ns/net` }, contextFor(dir));
      expect(result.success).toBe(true);
      const lsNet = /net:\[\d+\]/.exec(output(result.content))?.[0];
      expect(lsNet).toBeDefined();
      expect(lsNet).not.toBe(hostNet);
      expect(requests).toBe(2);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('each process of a line is wrapped on its own: --share-net for the network program only', async (test) => {
    await requireSandbox(test);
    const gated = await restrictedShellGate(profile)(
      'curl -s http://127.0.0.1:1/ | wc -c; ls; timeout 5 wget -qO- http://127.0.0.1:1/',
      dir,
    );
    if (!gated.allowed) throw new Error(gated.reason);
    const wrapped = gated.plan.steps
      .flatMap((step) => step.pipeline)
      .map((command) => ({ program: command.argv[command.programIndex ?? 0], argv: gated.wrap!(command, dir) }));
    await gated.limits?.release();
    expect(wrapped.map(({ program, argv }) => [program, argv.includes('--share-net')])).toEqual([
      ['curl', true],
      ['wc', false],
      ['ls', false],
      ['wget', true],
    ]);
    for (const { argv } of wrapped)
      expect(argv).toEqual(
        expect.arrayContaining(['--unshare-all', '--cap-drop', '--die-with-parent', '--new-session']),
      );
  });

  it('commands get only the allowlisted environment: no key, token or other secret of rho', async () => {
    const secrets: Record<string, string> = {
      OPENAI_API_KEY: 'sk-rho-test-1',
      AWS_SECRET_ACCESS_KEY: 'aws-rho-test-2',
      FOO_TOKEN: 'foo-rho-test-3',
      // Names no list of secret-looking names would catch.
      STRIPE_SK: 'sk_live_rho_test_4',
      SENTRY_DSN: 'https://rho-test-5@sentry.example/1',
    };
    // The local backend, watched: every process the tool starts, with the environment it gets.
    const local = createLocalBackend();
    const spawned: SpawnOptions[] = [];
    const backend: ExecutionBackend = { ...local, spawn: (options) => (spawned.push(options), local.spawn(options)) };
    Object.assign(process.env, secrets);
    try {
      for (const sandbox of ['required', 'off'] as const) {
        spawned.length = 0;
        const tool = createBashTool({ backend, mode: 'restricted', gate: restrictedShellGate(profile, { sandbox }) });
        const result = await call(tool, { command: 'printenv HOME | wc -l' }, contextFor(dir));
        if (sandbox === 'required' && !result.success && result.content.includes('no sandbox')) continue;
        expect(output(result.content)).toBe('1\n');
        expect(spawned).toHaveLength(2);
        for (const options of spawned) {
          const names = Object.keys(options.env ?? {});
          expect(names).toContain('PATH');
          for (const name of names)
            expect(name).toMatch(
              /^(PATH|HOME|USER|LOGNAME|LANG|LANGUAGE|LC_\w+|TZ|NO_COLOR|SSL_CERT_FILE|SSL_CERT_DIR|TERM|PAGER|GIT_PAGER|GIT_TERMINAL_PROMPT|GIT_CONFIG_NOSYSTEM|GIT_CONFIG_GLOBAL)$/,
            );
          for (const value of Object.values(secrets)) expect(JSON.stringify(options)).not.toContain(value);
        }
      }
    } finally {
      for (const name of Object.keys(secrets)) delete process.env[name];
    }
  });

  it('without bubblewrap, restricted commands are refused with how to install it; `sandbox: off` runs them', async () => {
    await writeFile(join(dir, 'keep.txt'), 'x');
    // A PATH where bwrap is not.
    const noBwrap = { searchPath: dir };
    const refused = await call(
      createBashTool({ mode: 'restricted', gate: restrictedShellGate(profile, { sandboxLookup: noBwrap }) }),
      { command: 'ls' },
      contextFor(dir),
    );
    expect(refused.success).toBe(false);
    expect(refused.content).toBe(
      'Command blocked: no sandbox: restricted commands run inside the bubblewrap sandbox, and bwrap was not found on PATH: ' +
        'install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora/RHEL: sudo dnf install bubblewrap; ' +
        'Arch: sudo pacman -S bubblewrap; Alpine: sudo apk add bubblewrap; openSUSE: sudo zypper install bubblewrap), ' +
        'or, knowing that the validators are then the only protection, set `sandbox: off` in a profile of your own.',
    );
    const mac = await call(
      createBashTool({
        mode: 'restricted',
        gate: restrictedShellGate(profile, { sandboxLookup: { platform: 'darwin' } }),
      }),
      { command: 'ls' },
      contextFor(dir),
    );
    expect(mac.content).toMatch(
      /^Command blocked: no sandbox: rho's sandbox for restricted commands is bubblewrap, which needs Linux; on macOS rho supports no sandbox/,
    );
    // rho policy check gives the same answer.
    const explained = await explainPolicy({ profile, shell: 'ls', sandboxLookup: noBwrap });
    expect(explained).toMatchObject({
      allowed: false,
      rule: 'sandbox.missing',
      sandbox: { mode: 'required', active: false },
    });
    expect(refused.content).toBe(`Command blocked: no sandbox: ${explained.reason ?? ''}`);
    // A profile that turns the sandbox off runs the command (and warns, see below).
    const off = { ...profile, sandbox: 'off' as const };
    const ran = await call(
      createBashTool({ mode: 'restricted', gate: restrictedShellGate(off, { sandboxLookup: noBwrap }) }),
      { command: 'ls' },
      contextFor(dir),
    );
    expect(output(ran.content)).toBe('keep.txt\n');
  });

  it('a profile with `sandbox: off` is warned about through onWarning every time its tools are made; the default is not', () => {
    const warnings: string[] = [];
    const onWarning = (message: string): void => {
      warnings.push(message);
    };
    fsTools({ profile, onWarning });
    expect(warnings).toEqual([]);
    fsTools({ profile: { ...profile, name: 'lab', sandbox: 'off' }, onWarning });
    fsTools({ profile: { ...profile, name: 'lab', sandbox: 'off' }, onWarning });
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(
      /^profile lab sets `sandbox: off`: restricted shell commands run without the operating-system sandbox/,
    );
  });
});
