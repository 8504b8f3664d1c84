import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ChatMessage } from '@rho/core';
import { startLoopbackServer, type LoopbackServer } from '@rho/core/testing';
import { sandboxWrapper } from '@rho/permissions';
import { afterEach, describe, expect, it } from 'vitest';
import { runRho } from './support/run-rho.js';

// Issue 32's resource findings, through the real CLI: one readonly line started 300 processes
// (`xargs -P 0`), `jq` grew until the timeout, a curl brace list made hundreds of requests, the
// sandbox backend let a tool use gigabytes of host memory and its /tmp was half the host's RAM.

const bubblewrap = (await sandboxWrapper()).available;
if (!bubblewrap && process.env['CI'] === 'true') throw new Error('CI must run the sandbox limit tests');

let server: LoopbackServer | undefined;
let target: Server | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  await new Promise<void>((resolve) => (target === undefined ? resolve() : target.close(() => resolve())));
  target = undefined;
});

function workspace(): { home: string; work: string } {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rho-cli-limits-')));
  const work = join(root, 'work');
  mkdirSync(work);
  return { home: join(root, 'rho-home'), work };
}

function bash(command: string, timeout?: number) {
  return {
    type: 'response' as const,
    toolCalls: [
      { name: 'bash', arguments: JSON.stringify({ command, ...(timeout === undefined ? {} : { timeout }) }) },
    ],
  };
}

function toolResults(): { output: string }[] {
  const last = server!.requests.at(-1)!.body as { messages: ChatMessage[] };
  return last.messages
    .filter((message) => message.role === 'tool')
    .map((message) => {
      const content = String(message.content);
      try {
        return JSON.parse(content) as { output: string };
      } catch {
        return { output: content };
      }
    });
}

/** How many `tail` processes of the host have `marker` in their command line, now. */
function processesWith(marker: string): number {
  const listing = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  return listing.split('\n').filter((line) => line.startsWith('tail ') && line.includes(marker)).length;
}

/** Runs rho while sampling the number of processes with `marker`; resolves the outcome and the most seen at once. */
async function runCounting(marker: string, ...args: Parameters<typeof runRho>) {
  let most = 0;
  const sampler = setInterval(() => {
    most = Math.max(most, processesWith(marker));
  }, 100);
  try {
    const outcome = await runRho(...args);
    return { outcome, most };
  } finally {
    clearInterval(sampler);
  }
}

describe.skipIf(!bubblewrap)('resource limits of the restricted shell, through the real CLI', () => {
  it('xargs -P 0 is refused with the reason and starts nothing (it started 300 host processes)', async () => {
    const { home, work } = workspace();
    const marker = `rho-xargs-${process.pid}-${Date.now()}`;
    server = await startLoopbackServer({
      steps: [bash(`seq 1 300 | xargs -P 0 -n 1 tail -f /dev/null ${marker}`, 4), { type: 'response', text: 'Done.' }],
    });
    const { outcome, most } = await runCounting(
      marker,
      ['--base-url', server.url, '--profile', 'readonly', '-y', 'Go.'],
      { env: { RHO_HOME: home }, cwd: work },
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    expect(most).toBe(0);
    const [result] = toolResults();
    expect(result!.output).toMatch(/xargs -P 0 .*-P 8 or fewer/);
  });

  it('the pids limit holds the processes of one line, and the result names it', async () => {
    const { home, work } = workspace();
    writeFileSync(join(work, 'few.yaml'), 'profile: few-processes\nlimits:\n  pids: 8\n');
    const marker = `rho-pids-${process.pid}-${Date.now()}`;
    server = await startLoopbackServer({
      steps: [bash(`seq 1 40 | xargs -P 8 -n 1 tail -f /dev/null ${marker}`, 8), { type: 'response', text: 'Done.' }],
    });
    const { outcome, most } = await runCounting(
      marker,
      ['--base-url', server.url, '--profile', 'few.yaml', '-y', 'Go.'],
      {
        env: { RHO_HOME: home },
        cwd: work,
      },
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    // xargs's sandbox (bubblewrap's two processes and xargs) leaves room for 5 of the 8 tails it asked for.
    expect(most, JSON.stringify(toolResults())).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(5);
    const [result] = toolResults();
    expect(result!.output).toContain('process limit reached (pids 8)');
  });

  it.skipIf(process.getuid?.() !== 0)(
    'as another user (no cgroup to make), RLIMIT_NPROC inside the sandbox holds the line',
    async () => {
      const { home, work } = workspace();
      writeFileSync(join(work, 'few.yaml'), 'profile: few-processes\nlimits:\n  pids: 6\n');
      // The user nobody owns the working directory and rho's home, and has a process of its own on the host.
      mkdirSync(home);
      for (const path of [dirname(work), work, home, join(work, 'few.yaml')]) chownSync(path, 65534, 65534);
      const marker = `rho-nproc-${process.pid}-${Date.now()}`;
      server = await startLoopbackServer({
        steps: [bash(`seq 1 40 | xargs -P 8 -n 1 tail -f /dev/null ${marker}`, 8), { type: 'response', text: 'Done.' }],
      });
      const { outcome, most } = await runCounting(
        marker,
        ['--base-url', server.url, '--profile', 'few.yaml', '-y', 'Go.'],
        { env: { RHO_HOME: home, HOME: home }, cwd: work, uid: 65534, gid: 65534 },
      );
      expect(outcome.code, outcome.stderr).toBe(0);
      // xargs's sandbox holds bubblewrap's init, xargs and at most 4 tails. GNU xargs waits and
      // retries a fork refused by RLIMIT_NPROC without a word, so there is nothing to name here
      // (a cgroup counts refused forks; RLIMIT_NPROC does not).
      expect(most).toBeGreaterThan(0);
      expect(most).toBeLessThanOrEqual(4);
      const [result] = toolResults();
      expect(result!.output).toContain('[Command timed out after 8s and was killed]');
    },
  );

  it('a jq memory bomb is stopped by the memory limit, and the result names the limit', async () => {
    const { home, work } = workspace();
    writeFileSync(join(work, 'small.yaml'), 'profile: small-memory\nlimits:\n  memory: 128M\n');
    server = await startLoopbackServer({
      steps: [bash(`jq -n '[range(1e10)] | length'`, 100), { type: 'response', text: 'Done.' }],
    });
    const outcome = await runRho(['--base-url', server.url, '--profile', 'small.yaml', '-y', 'Go.'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.code, outcome.stderr).toBe(0);
    const [result] = toolResults();
    expect(result!.output).toContain('memory limit reached (128 MiB)');
    expect(result!.output).not.toContain('timed out');
  });

  it('a curl brace list is refused before any request (it made hundreds)', async () => {
    const { home, work } = workspace();
    let requests = 0;
    target = createServer((_request, response) => {
      requests += 1;
      response.end('ok\n');
    });
    await new Promise<void>((resolve) => target!.listen(0, '127.0.0.1', resolve));
    const port = (target.address() as AddressInfo).port;
    server = await startLoopbackServer({
      steps: [
        bash(`curl -s 'http://127.0.0.1:${port}/{a,b,c,d,e}{0,1,2,3,4,5,6,7,8,9}'`),
        bash(`curl -s 'http://127.0.0.1:${port}/{a,b}'`),
        { type: 'response', text: 'Done.' },
      ],
    });
    const outcome = await runRho(['--base-url', server.url, '--profile', 'readonly', '-y', 'Go.'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.code, outcome.stderr).toBe(0);
    const [flood, pair] = toolResults();
    expect(flood!.output).toMatch(/curl expands .* into 50 requests/);
    // Two URLs are fine: the second line made exactly its two requests.
    expect(pair!.output).toBe('ok\nok\n');
    expect(requests).toBe(2);
  });

  it("the restricted shell's /tmp is on disk, not in RAM: sort spills there past the memory limit, each file bounded", async () => {
    const { home, work } = workspace();
    // About 28 MB of numbers: more than the 16 MiB of memory the profiles grant a line.
    writeFileSync(join(work, 'numbers.txt'), Array.from({ length: 3_500_000 }, (_, index) => `${index}\n`).join(''));
    writeFileSync(join(work, 'small.yaml'), 'profile: small-memory\nlimits:\n  memory: 16M\n');
    writeFileSync(join(work, 'tiny-files.yaml'), 'profile: tiny-files\nlimits:\n  memory: 16M\n  tmp_size: 1M\n');
    server = await startLoopbackServer({
      steps: [bash('stat -f -c %T /tmp'), bash('sort -rn numbers.txt | tail -1'), { type: 'response', text: 'Done.' }],
    });
    const outcome = await runRho(['--base-url', server.url, '--profile', 'small.yaml', '-y', 'Go.'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.code, outcome.stderr).toBe(0);
    const [type, sorted] = toolResults();
    // It was a tmpfs of half the host's memory; now the file system of /var/tmp.
    expect(type!.output.trim()).toBe(execFileSync('stat', ['-f', '-c', '%T', '/var/tmp'], { encoding: 'utf8' }).trim());
    expect(type!.output.trim()).not.toBe('tmpfs');
    expect(sorted!.output).toBe('0\n');
    await server.close();
    server = await startLoopbackServer({
      steps: [bash('sort -rn numbers.txt | tail -1'), { type: 'response', text: 'Done.' }],
    });
    const tiny = await runRho(['--base-url', server.url, '--profile', 'tiny-files.yaml', '-y', 'Go.'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(tiny.code, tiny.stderr).toBe(0);
    const [bounded] = toolResults();
    expect(bounded!.output).toContain('file size limit (tmp_size 1 MiB)');
  });
});

describe.skipIf(!bubblewrap)('common read-only lines that were refused run under readonly', () => {
  it('find -exec wc {} +, git rev-parse, curl -o /dev/null -w, bc', async () => {
    const { home, work } = workspace();
    writeFileSync(join(work, 'a.txt'), 'one\ntwo\n');
    execFileSync('git', ['init', '-q', '-b', 'main', work]);
    execFileSync('git', ['-C', work, 'add', 'a.txt']);
    execFileSync('git', [
      '-C',
      work,
      '-c',
      'user.email=t@example.com',
      '-c',
      'user.name=t',
      'commit',
      '-q',
      '-m',
      'one',
    ]);
    target = createServer((_request, response) => {
      response.statusCode = 204;
      response.end();
    });
    await new Promise<void>((resolve) => target!.listen(0, '127.0.0.1', resolve));
    const port = (target.address() as AddressInfo).port;
    server = await startLoopbackServer({
      steps: [
        bash("find . -name '*.txt' -exec wc -l {} +"),
        bash('git rev-parse --show-toplevel --abbrev-ref HEAD && git rev-parse HEAD'),
        bash(`curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:${port}/`),
        bash("bc <<< '6*7'"),
        bash('echo 2^10 | bc'),
        { type: 'response', text: 'Done.' },
      ],
    });
    const outcome = await runRho(['--base-url', server.url, '--profile', 'readonly', '-y', 'Go.'], {
      env: { RHO_HOME: home },
      cwd: work,
    });
    expect(outcome.code, outcome.stderr).toBe(0);
    const [find, rev, curl, product, power] = toolResults().map((result) => result.output);
    expect(find).toBe('2 ./a.txt\n');
    expect(rev).toMatch(new RegExp(`^${work}\nmain\n[0-9a-f]{40}\n$`));
    expect(curl).toBe('204');
    expect(product).toBe('42\n');
    expect(power).toBe('1024\n');
  });
});

describe.skipIf(!bubblewrap)('resource limits of the sandbox backend, through the real CLI', () => {
  it('a tool cannot allocate beyond the memory limit, and /tmp is bounded', async () => {
    const { home, work } = workspace();
    writeFileSync(join(work, 'agent.yaml'), 'backend:\n  name: sandbox\n  max_memory: 256M\n  tmp_size: 32M\n');
    // 1 GiB touched byte by byte (it touched 4 GiB of host RAM), then 64 MiB written to /tmp.
    const allocate = `${process.execPath} -e 'const b = Buffer.alloc(1024 ** 3, 1); console.log("allocated", b.length)'`;
    server = await startLoopbackServer({
      steps: [
        bash(allocate, 100),
        bash('head -c 67108864 /dev/zero > /tmp/big; echo "exit $?"; df -B1 --output=size /tmp'),
        { type: 'response', text: 'Done.' },
      ],
    });
    const outcome = await runRho(
      ['--base-url', server.url, '--profile', 'unrestricted', '-c', 'agent.yaml', '-y', 'Go.'],
      {
        env: { RHO_HOME: home },
        cwd: work,
      },
    );
    expect(outcome.code, outcome.stderr).toBe(0);
    const [allocation, tmp] = toolResults();
    expect(allocation!.output).not.toContain('allocated');
    expect(allocation!.output).toContain('memory limit reached (256 MiB)');
    expect(tmp!.output).toContain('No space left on device');
    expect(tmp!.output).toContain(String(32 * 1024 * 1024));
  });
});
