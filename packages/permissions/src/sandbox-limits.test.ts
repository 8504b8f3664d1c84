import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ConfigError } from '@rho/core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { scrubEnvironment } from './harden-plan.js';
import { parseProfile, profileToDocument } from './permission-profile.js';
import {
  DEFAULT_SANDBOX_LIMITS,
  formatBytes,
  parseByteSize,
  resolveSandboxLimits,
  SandboxLimitRun,
  type SandboxLimits,
} from './sandbox-limits.js';
import { sandboxWrapper, type SandboxWrapper } from './sandbox-wrapper.js';

// The limits as a layer of the sandbox: any program (bash, jq, head), not only what the shell
// validators let through, is held by them, and what it reached is named.

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'rho-limits-'));
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

function run(argv: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: scratch,
      env: scrubEnvironment(process.env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function sandbox(context: { skip: (note: string) => void }): Promise<SandboxWrapper> {
  const wrapper = await sandboxWrapper();
  if (!wrapper.available) {
    if (process.env['CI'] === 'true')
      throw new Error(`CI must run the sandbox tests: ${wrapper.unavailableReason ?? ''}`);
    context.skip('bubblewrap is not available here');
  }
  return wrapper;
}

/** Runs `argv` in the sandbox under `limits`; resolves what it printed and the limits it reached. */
async function limited(
  wrapper: SandboxWrapper,
  argv: string[],
  limits: Partial<SandboxLimits>,
  options: { noCgroup?: boolean; tmpParent?: string } = {},
) {
  const limitRun = new SandboxLimitRun(resolveSandboxLimits(limits), {
    ...(wrapper.program === undefined ? {} : { bwrap: wrapper.program }),
    ...options,
  });
  try {
    const result = await run(wrapper.wrap(argv, { cwd: scratch, allowNetwork: false, limits: limitRun.arguments }));
    const status = result.code ?? -1;
    return {
      ...result,
      enforcement: limitRun.enforcement,
      hits: limitRun.hits({ statuses: [status], stderr: result.stderr }),
      cgroups: limitRun.arguments.outer.filter((word) => word.endsWith('/cgroup.procs')).map((file) => dirname(file)),
    };
  } finally {
    await limitRun.release();
  }
}

describe('sizes in profiles', () => {
  test('bytes, binary units and what is no size', () => {
    expect(parseByteSize(1048576)).toBe(1048576);
    expect(parseByteSize('512M')).toBe(512 * 1024 * 1024);
    expect(parseByteSize('512 MiB')).toBe(512 * 1024 * 1024);
    expect(parseByteSize('1.5G')).toBe(1.5 * 1024 ** 3);
    expect(parseByteSize('64k')).toBe(65536);
    for (const bad of ['', 'lots', '-1', 0, 1.5, '12 parsecs', null, true]) expect(parseByteSize(bad)).toBeUndefined();
    expect(formatBytes(512 * 1024 * 1024)).toBe('512 MiB');
    expect(formatBytes(1.5 * 1024 ** 3)).toBe('1.5 GiB');
    expect(formatBytes(100)).toBe('100 bytes');
  });

  test('a profile sets its limits, keeps the defaults for the rest, and writes them back', () => {
    const profile = parseProfile({ profile: 'p', limits: { pids: 64, memory: '1G', cpu_seconds: 5, tmp_size: '16M' } });
    expect(profile.limits).toEqual({ pids: 64, memoryBytes: 1024 ** 3, cpuSeconds: 5, tmpBytes: 16 * 1024 * 1024 });
    expect(profileToDocument(profile)['limits']).toEqual({
      pids: 64,
      memory: 1024 ** 3,
      cpu_seconds: 5,
      tmp_size: 16 * 1024 * 1024,
    });
    expect(parseProfile(profileToDocument(profile)).limits).toEqual(profile.limits);
    const some = parseProfile({ profile: 'p', limits: { memory: 268435456 } });
    expect(resolveSandboxLimits(some.limits)).toEqual({ ...DEFAULT_SANDBOX_LIMITS, memoryBytes: 268435456 });
    expect(parseProfile({ profile: 'p' }).limits).toBeUndefined();
  });

  test.each([
    [{ pids: 0 }, "Profile: 'limits.pids' must be at least 1 (got 0)."],
    [{ pids: 2.5 }, "'limits.pids' must be a whole number (got 2.5)."],
    [{ memory: 'plenty' }, /'limits\.memory' must be a size: bytes, or a number with K, M, G or T .*\(got "plenty"\)/],
    [{ memory: '1M' }, /'limits\.memory' must be at least 16 MiB/],
    [{ cpu_seconds: '60' }, /'limits\.cpu_seconds' must be a whole number \(got "60"\)/],
    [{ tmp_size: '100' }, /'limits\.tmp_size' must be at least 1 MiB/],
    [{ disk: '1G' }, /'limits\.disk' is an unknown key; allowed keys: pids, memory, cpu_seconds, tmp_size/],
  ])('limits %j is refused with what to write', (limits, message) => {
    expect(() => parseProfile({ profile: 'p', limits })).toThrow(ConfigError);
    expect(() => parseProfile({ profile: 'p', limits })).toThrow(message);
  });
});

describe('limits inside the sandbox', () => {
  test('a fork loop stops at the process limit, and the limit is named', async (context) => {
    const wrapper = await sandbox(context);
    // 40 sleeps in the background, then a word: bash cannot start them all and gives up.
    const result = await limited(wrapper, ['bash', '-c', 'for i in {1..40}; do sleep 5 & done; echo all-started'], {
      pids: 20,
    });
    // Root without a pids cgroup has no process limit (RLIMIT_NPROC does not bind root).
    if (result.enforcement.pids === 'none') return;
    expect(result.stdout).not.toContain('all-started');
    expect(result.stderr).toMatch(/fork/);
    expect(result.hits.map((hit) => hit.message)).toContain(
      'process limit reached (pids 20): the command could not start more processes',
    );
  });

  test('jq growing without end is stopped by the memory limit, and the limit is named', async (context) => {
    const wrapper = await sandbox(context);
    const result = await limited(wrapper, ['jq', '-n', '[range(1e10)] | length'], { memoryBytes: 64 * 1024 * 1024 });
    expect(result.code).not.toBe(0);
    expect(result.hits.map((hit) => hit.limit)).toEqual(['memory']);
    expect(result.hits[0]?.message).toMatch(/^memory limit reached \(64 MiB\)/);
  });

  test('without a cgroup, RLIMIT_AS holds the memory and the failed allocation is named', async (context) => {
    const wrapper = await sandbox(context);
    const result = await limited(
      wrapper,
      ['jq', '-n', '[range(1e10)] | length'],
      { memoryBytes: 64 * 1024 * 1024 },
      {
        noCgroup: true,
      },
    );
    expect(result.enforcement.memory).toBe('rlimit');
    expect(result.code).not.toBe(0);
    expect(result.hits[0]?.message).toMatch(
      /^memory limit reached \(64 MiB\): a process of the command could not allocate/,
    );
  });

  test('a busy loop is stopped by the CPU time limit, and the limit is named', async (context) => {
    const wrapper = await sandbox(context);
    const result = await limited(wrapper, ['bash', '-c', 'while :; do :; done'], { cpuSeconds: 1 });
    expect(result.code).toBe(128 + 24);
    expect(result.hits.map((hit) => hit.message)).toEqual([
      'CPU time limit (1 s): a process was stopped after 1 s of CPU time',
    ]);
  });

  test('/tmp is a directory on disk made for the run: a file past tmp_size fails, the limit is named, the directory goes', async (context) => {
    const wrapper = await sandbox(context);
    const size = 4 * 1024 * 1024;
    const parent = mkdtempSync(join(tmpdir(), 'rho-limits-parent-'));
    try {
      const result = await limited(
        wrapper,
        ['bash', '-c', 'head -c 2097152 /dev/zero > /tmp/fits; head -c 8388608 /dev/zero > /tmp/big; ls -l /tmp'],
        { tmpBytes: size },
        { tmpParent: parent },
      );
      if (result.enforcement.tmp === 'none') return;
      expect(result.enforcement.tmp).toBe('disk');
      expect(result.stdout).toMatch(/ 2097152 .* fits/);
      expect(result.stdout).toMatch(new RegExp(` ${size} .* big`));
      expect(result.stderr).toContain('File size limit exceeded');
      expect(result.hits.map((hit) => hit.message)).toEqual([
        'file size limit (tmp_size 4 MiB): a process wrote a file as large as a file may be',
      ]);
      // Made under the parent asked for, and removed with the run.
      expect(readdirSync(parent)).toEqual([]);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  test('sort past the memory limit spills to the disk /tmp and finishes', async (context) => {
    const wrapper = await sandbox(context);
    writeFileSync(join(scratch, 'numbers.txt'), Array.from({ length: 3_500_000 }, (_, index) => `${index}\n`).join(''));
    const result = await limited(wrapper, ['bash', '-c', 'sort -rn numbers.txt | tail -1'], {
      memoryBytes: 16 * 1024 * 1024,
    });
    expect(result.stdout).toBe('0\n');
    expect(result.hits).toEqual([]);
  });

  test('ordinary work reaches no limit, and the cgroup is gone afterwards', async (context) => {
    const wrapper = await sandbox(context);
    const result = await limited(wrapper, ['bash', '-c', 'seq 1 1000 | sort -n | tail -1'], {});
    expect(result.stdout.trim()).toBe('1000');
    expect(result.hits).toEqual([]);
    if (result.enforcement.pids === 'cgroup') expect(result.cgroups.length).toBeGreaterThan(0);
    for (const cgroup of result.cgroups) expect(existsSync(cgroup)).toBe(false);
  });
});
