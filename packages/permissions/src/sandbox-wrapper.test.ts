import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { builtinProfile } from './builtin-profiles.js';
import { explainPolicy, formatPolicyExplanation } from './explain-policy.js';
import { scrubEnvironment } from './harden-plan.js';
import { parseProfile } from './permission-profile.js';
import { commandNeedsNetwork, sandboxStatus, sandboxWrapper, type SandboxWrapper } from './sandbox-wrapper.js';

// The sandbox as a layer on its own: what it guarantees for any program, including programs the
// shell validators would never let through (bash, env, touch), so nothing here relies on them.

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'rho-sandbox-'));
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

function run(
  argv: string[],
  env: NodeJS.ProcessEnv = scrubEnvironment(process.env),
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { cwd: scratch, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The sandbox, or a skip where bubblewrap cannot run (under CI it must: the test fails). */
async function sandbox(context: { skip: (note: string) => void }): Promise<SandboxWrapper> {
  const wrapper = await sandboxWrapper();
  if (!wrapper.available) {
    if (process.env['CI'] === 'true')
      throw new Error(`CI must run the sandbox tests: ${wrapper.unavailableReason ?? ''}`);
    context.skip('bubblewrap is not available here');
  }
  return wrapper;
}

describe('the bubblewrap sandbox', () => {
  test('env inside it shows only the allowlisted variables, whatever rho had', async (context) => {
    const wrapper = await sandbox(context);
    const base = {
      ...process.env,
      OPENAI_API_KEY: 'sk-1',
      AWS_SECRET_ACCESS_KEY: 'aws-2',
      FOO_TOKEN: 'foo-3',
      ACME_DEPLOY_KEY: 'acme-4',
      DATABASE_URL: 'postgres://u:p@h/db',
    };
    const result = await run(wrapper.wrap(['env'], { cwd: scratch, allowNetwork: false }), scrubEnvironment(base));
    expect(result.code).toBe(0);
    const names = result.stdout
      .trim()
      .split('\n')
      .map((line) => line.slice(0, line.indexOf('=')));
    for (const name of ['OPENAI_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'FOO_TOKEN', 'ACME_DEPLOY_KEY', 'DATABASE_URL'])
      expect(names).not.toContain(name);
    for (const name of names)
      expect(name).toMatch(
        /^(PWD|PATH|HOME|USER|LOGNAME|LANG|LANGUAGE|LC_\w+|TZ|NO_COLOR|SSL_CERT_FILE|SSL_CERT_DIR|TERM|PAGER|GIT_PAGER|GIT_TERMINAL_PROMPT|GIT_CONFIG_NOSYSTEM|GIT_CONFIG_GLOBAL)$/,
      );
  });

  test('/proc shows nothing of the processes outside: their environment cannot be read', async (context) => {
    const wrapper = await sandbox(context);
    // Stands for rho: a process outside with a secret in its environment.
    const outsider = spawn('sleep', ['30.75'], {
      env: { ...process.env, OPENAI_API_KEY: 'sk-outside-5531' },
      stdio: 'ignore',
    });
    try {
      const read = ['cat', `/proc/${outsider.pid}/environ`];
      const inside = await run(wrapper.wrap(read, { cwd: scratch, allowNetwork: false }));
      expect(inside.code).not.toBe(0);
      expect(inside.stderr).toMatch(/No such file or directory/);
      expect(inside.stdout).not.toContain('sk-outside-5531');
      // The same read outside the sandbox shows it: the check above can fail.
      expect((await run(read)).stdout).toContain('sk-outside-5531');
    } finally {
      outsider.kill('SIGKILL');
    }
  });

  test('the root is read-only, including the working directory', async (context) => {
    const wrapper = await sandbox(context);
    const result = await run(wrapper.wrap(['touch', join(scratch, 'written')], { cwd: scratch, allowNetwork: false }));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/Read-only file system/);
  });

  test('ps sees the sandbox only: a new PID namespace, and a new UTS one', async (context) => {
    const wrapper = await sandbox(context);
    const result = await run(
      wrapper.wrap(['bash', '-c', 'hostname; ls /proc | grep -c "^[0-9]"'], { cwd: scratch, allowNetwork: false }),
    );
    expect(result.stdout.split('\n')[0]).toBe('rho-sandbox');
    // bwrap's init, bash, ls and grep at most.
    expect(Number(result.stdout.split('\n')[1])).toBeLessThanOrEqual(4);
  });

  test('without allowNetwork a process cannot reach a server on the host loopback; with it, it can', async (context) => {
    const wrapper = await sandbox(context);
    const server = createServer((_request, response) => response.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    try {
      const connect = ['bash', '-c', `exec 3<>/dev/tcp/127.0.0.1/${port} && echo connected`];
      const closed = await run(wrapper.wrap(connect, { cwd: scratch, allowNetwork: false }));
      expect(closed.stdout).toBe('');
      expect(closed.stderr).toMatch(/Connection refused|Network is unreachable/);
      const open = await run(wrapper.wrap(connect, { cwd: scratch, allowNetwork: true }));
      expect(open.stdout).toBe('connected\n');
    } finally {
      server.close();
    }
  });

  test('network programs are the only ones that ask for the network, past wrappers', () => {
    expect(commandNeedsNetwork({ argv: ['curl', '-s', 'http://x/'] })).toBe(true);
    expect(commandNeedsNetwork({ argv: ['timeout', '5', 'wget', '-qO-', 'http://x/'], programIndex: 2 })).toBe(true);
    expect(commandNeedsNetwork({ argv: ['tar', 'tvf', 'a.tar', '-I', 'curl'] })).toBe(false);
    expect(commandNeedsNetwork({ argv: ['xargs', 'curl'], programIndex: 1 })).toBe(true);
    expect(commandNeedsNetwork({ argv: ['wc', '-c'] })).toBe(false);
  });
});

describe('when there is no sandbox', () => {
  test('a PATH without bwrap: unavailable, with how to install it', async () => {
    const wrapper = await sandboxWrapper({ searchPath: scratch });
    expect(wrapper.available).toBe(false);
    expect(wrapper.unavailableReason).toMatch(
      /^restricted commands run inside the bubblewrap sandbox, and bwrap was not found on PATH: install bubblewrap \(Debian\/Ubuntu: sudo apt-get install bubblewrap;/,
    );
    expect(wrapper.unavailableCause).toEqual({
      kind: 'not_found',
      problem: 'bwrap was not found on PATH',
      fix: expect.stringMatching(/^install bubblewrap \(Debian\/Ubuntu: sudo apt-get install bubblewrap;/),
    });
    expect(wrapper.wrap(['ls'], { cwd: scratch, allowNetwork: false })).toEqual(['ls']);
  });

  test('a bwrap that cannot make a sandbox (no user namespaces): unavailable, with its error and the fix', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'rho-fake-bwrap-'));
    const fake = join(directory, 'bwrap');
    writeFileSync(fake, '#!/bin/sh\necho "bwrap: No permissions to creating new namespace" >&2\nexit 1\n');
    chmodSync(fake, 0o755);
    const wrapper = await sandboxWrapper({ searchPath: directory });
    expect(wrapper.available).toBe(false);
    expect(wrapper.unavailableCause).toEqual({
      kind: 'probe_failed',
      problem: `bubblewrap (${fake}) cannot create a sandbox here (bwrap: No permissions to creating new namespace)`,
      fix: expect.stringContaining('allow unprivileged user namespaces'),
      program: fake,
    });
  });

  test('macOS and other systems: no supported sandbox, said so', async () => {
    const wrapper = await sandboxWrapper({ platform: 'darwin' });
    expect(wrapper.available).toBe(false);
    expect(wrapper.unavailableReason).toMatch(/on macOS rho supports no sandbox .*sandbox-exec is deprecated/);
    expect(wrapper.unavailableCause).toMatchObject({
      kind: 'platform',
      problem: 'bubblewrap needs Linux, and this is macOS',
    });
  });

  test('required (the default) refuses; `sandbox: off` runs with a warning', async () => {
    const missing = await sandboxWrapper({ searchPath: scratch });
    const readonly = builtinProfile('readonly')!;
    expect(sandboxStatus(readonly, missing)).toMatchObject({
      mode: 'required',
      active: false,
      refusal: missing.unavailableReason,
    });
    const off = sandboxStatus({ ...readonly, name: 'lab', sandbox: 'off' }, missing);
    expect(off).toMatchObject({ mode: 'off', active: false });
    expect(off.refusal).toBeUndefined();
    expect(off.warning).toMatch(/^profile lab sets `sandbox: off`/);
  });

  test('profiles: `sandbox: off` and `required` are read, anything else is refused with the allowed values', () => {
    expect(parseProfile({ profile: 'lab', sandbox: 'off' }).sandbox).toBe('off');
    // YAML 1.1 readers turn a bare off into false.
    expect(parseProfile({ profile: 'lab', sandbox: false }).sandbox).toBe('off');
    expect(parseProfile({ profile: 'lab', sandbox: 'required' }).sandbox).toBe('required');
    expect(parseProfile({ profile: 'lab' }).sandbox).toBeUndefined();
    expect(() => parseProfile({ profile: 'lab', sandbox: 'auto' })).toThrow(
      /'sandbox' must be one of required, off \(got "auto"\)/,
    );
  });
});

describe('rho policy check shows the sandbox', () => {
  test('active, and which program of the line gets the network', async (context) => {
    await sandbox(context);
    const explanation = await explainPolicy({
      profile: builtinProfile('readonly')!,
      shell: 'curl -s http://127.0.0.1:1/ | wc -c',
    });
    expect(explanation).toMatchObject({
      allowed: true,
      sandbox: { mode: 'required', active: true, network: ['curl'] },
    });
    expect(formatPolicyExplanation(explanation)).toMatch(
      /^sandbox: {2}active: bubblewrap \(.*bwrap\), read-only, network for curl only$/m,
    );
  });

  test('missing: the line is refused, as the tool refuses it', async () => {
    const explanation = await explainPolicy({
      profile: builtinProfile('readonly')!,
      shell: 'ls',
      sandboxLookup: { searchPath: scratch },
    });
    expect(explanation).toMatchObject({ allowed: false, rule: 'sandbox.missing', sandbox: { active: false } });
    expect(formatPolicyExplanation(explanation)).toMatch(/^sandbox: {2}missing \(required by the profile\)$/m);
  });

  test('unrestricted shells have no sandbox line', async () => {
    const explanation = await explainPolicy({ profile: builtinProfile('developer')!, shell: 'ls' });
    expect(explanation.sandbox).toBeUndefined();
  });
});
