import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type { Tool, ToolContext, ToolResult } from '@rho/core';
import { builtinProfile, sandboxWrapper } from '@rho/permissions';
import { createBashTool, createWriteTool, fsTools, type WritePathCheck } from '@rho/tools-fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandboxBackend, type SandboxBackend, type SandboxBackendOptions } from './sandbox-backend.js';
import { sandboxBackendFactory } from './sandbox-backend-factory.js';

// What the sandbox backend promises, each tried and refused: writes outside the working
// directory (absolute, `..`, through a symlink), rho's environment, the network, a process left
// behind, and the limits. Each check has its counterpart that succeeds, so the test can fail.
const available = (await sandboxWrapper()).available;

let root: string;
let work: string;
let outside: string;
let backend: SandboxBackend | undefined;

beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'rho-isolation-')));
  work = join(root, 'work');
  await mkdir(work);
  // Not under /tmp, which the container replaces with a private one: a directory it could reach.
  outside = await realpath(
    await mkdtemp(join(existsSync('/var/tmp') ? '/var/tmp' : homedir(), 'rho-isolation-outside-')),
  );
  await writeFile(join(outside, 'precious.txt'), 'untouched');
});
afterEach(async () => {
  await backend?.close();
  backend = undefined;
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

async function start(options: Partial<SandboxBackendOptions> = {}): Promise<SandboxBackend> {
  backend = await createSandboxBackend({ workingDir: work, ...options });
  return backend;
}
const context = (on: SandboxBackend): ToolContext => ({
  signal: new AbortController().signal,
  sessionId: 'isolation',
  workingDir: work,
  backend: on,
});
const call = <Args>(tool: Tool<Args>, args: Args, on: SandboxBackend): Promise<ToolResult> =>
  tool.handle({ callId: 'call', toolName: tool.name, arguments: args }, context(on));
const bash = createBashTool({ mode: 'unrestricted', killGraceSeconds: 0.5 });
const run = async (on: SandboxBackend, command: string): Promise<string> =>
  (JSON.parse((await call(bash, { command }, on)).content) as { output: string }).output;
const runIn = async (on: SandboxBackend, workingDir: string, command: string): Promise<string> => {
  const invocation = { callId: 'call', toolName: bash.name, arguments: { command } };
  const result = await bash.handle(invocation, { ...context(on), workingDir });
  return (JSON.parse(result.content) as { output: string }).output;
};
// The path policy lets everything through: only the container stands in the way.
const allowEveryPath: WritePathCheck = async (path) => ({ allowed: true, realPath: path });
const write = createWriteTool({ mode: 'full', checkPath: allowEveryPath });

/** Host processes whose command line contains `marker` (not zombies). */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (commandLine.includes(marker) && stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z') found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

describe.skipIf(!available && process.env['CI'] !== 'true')('sandbox backend isolation', () => {
  it('writes inside the working directory, and nowhere else: absolute, .., symlink escape', async () => {
    const sandbox = await start();
    expect(await call(write, { path: 'inside.txt', content: 'ok' }, sandbox)).toMatchObject({ success: true });
    expect(await readFile(join(work, 'inside.txt'), 'utf8')).toBe('ok');
    await symlink(outside, join(work, 'escape'));
    const dotdot = join(relative(work, outside), 'new.txt');
    expect(dotdot.startsWith('../')).toBe(true);
    for (const path of [join(outside, 'new.txt'), dotdot, 'escape/new.txt', 'escape/precious.txt']) {
      const result = await call(write, { path, content: 'escaped' }, sandbox);
      expect(result.success, path).toBe(false);
      // Outside the read view (a directory under /var/tmp) does not even exist in the container.
      expect(result.content, path).toMatch(/Permission denied|read-only file system|no such file/i);
    }
    expect(
      await run(
        sandbox,
        `echo escaped > ${outside}/shell.txt; echo escaped > ${dotdot}; echo escaped > escape/precious.txt; touch /usr/rho-test 2>&1; echo done`,
      ),
    ).toContain('Read-only file system');
    expect(readdirSync(outside)).toEqual(['precious.txt']);
    // Next to the working directory, under /tmp: the container's private /tmp takes the write, the host never sees it.
    await call(write, { path: '../sibling.txt', content: 'private' }, sandbox);
    expect(readdirSync(root)).toEqual(['work']);
    expect(await readFile(join(outside, 'precious.txt'), 'utf8')).toBe('untouched');
    // The private /tmp is writable and gone with the container.
    expect(await run(sandbox, 'echo scratch > /tmp/scratch && cat /tmp/scratch')).toBe('scratch\n');
  });

  it('a read-only working directory refuses writes too', async () => {
    const sandbox = await start({ writable: false });
    expect((await call(write, { path: 'inside.txt', content: 'no' }, sandbox)).success).toBe(false);
    expect(await run(sandbox, 'touch x 2>&1')).toContain('Read-only file system');
    expect(existsSync(join(work, 'inside.txt'))).toBe(false);
  });

  it("sees nothing of rho's environment or processes", async () => {
    process.env['RHO_ISOLATION_SECRET'] = 'hunter2-isolation';
    try {
      const sandbox = await start({ env: { GIVEN: 'explicitly' } });
      const output = await run(sandbox, 'env; cat /proc/*/environ 2>/dev/null | tr "\\0" "\\n"; ps -eo pid,comm');
      expect(output).not.toContain('hunter2-isolation');
      expect(output).toContain('GIVEN=explicitly');
      expect(output).toContain('HOME=/tmp/home');
      // Only the container's own processes: its init, the server and this command.
      expect(output).not.toMatch(/\bvitest\b/);
      expect(await run(sandbox, 'echo $RHO_ISOLATION_SECRET')).toBe('\n');
    } finally {
      delete process.env['RHO_ISOLATION_SECRET'];
    }
  });

  it('hides the directories it is asked to hide (rho home with its database passwords)', async () => {
    const home = join(root, 'rho-home');
    await mkdir(home);
    await writeFile(join(home, 'databases.yaml'), 'password: hunter2\n');
    const sandbox = await start({ hide: [home] });
    expect(await run(sandbox, `ls -A ${home}; cat ${home}/databases.yaml 2>&1 || true`)).toMatch(/No such file/);
  });

  it("hides the user's home (by absolute path, through a symlink planted in the working directory, and under a working directory that contains it)", async () => {
    // A home outside /tmp (the container's /tmp is private anyway), with the keys people keep there.
    const home = join(outside, 'home');
    await mkdir(join(home, '.aws'), { recursive: true });
    await writeFile(join(home, '.aws', 'credentials'), 'aws_secret_access_key=FROM-THE-HOME\n');
    await symlink(join(home, '.aws', 'credentials'), join(work, 'creds'));
    const create = (workingDir: string) =>
      sandboxBackendFactory.create({
        workingDir,
        options: {},
        access: { workingDir: 'read-only', network: false },
        env: { HOME: home, RHO_HOME: join(root, 'rho-home') },
      }) as Promise<SandboxBackend>;
    backend = await create(work);
    const probe = `cat ${home}/.aws/credentials creds 2>&1; ls -A ${home} 2>&1; echo end`;
    const hidden = await run(backend, probe);
    expect(hidden).not.toContain('FROM-THE-HOME');
    expect(hidden).toContain('end');
    await expect(backend.readFile(join(home, '.aws', 'credentials'), { maxBytes: 1000 })).rejects.toThrow();
    await backend.close();
    // The working directory holds the home: the home is hidden again under it; the rest is visible.
    backend = await create(outside);
    const under = await runIn(backend, outside, `cat home/.aws/credentials 2>&1; cat precious.txt`);
    expect(under).not.toContain('FROM-THE-HOME');
    expect(under).toContain('untouched');
    await backend.close();
    // A working directory inside the home stays visible (the project is there); the rest is not.
    await writeFile(join(home, 'project.txt'), 'code');
    await mkdir(join(home, 'project'));
    await writeFile(join(home, 'project', 'main.txt'), 'main');
    backend = await create(join(home, 'project'));
    const inside = await runIn(
      backend,
      join(home, 'project'),
      `cat main.txt; cat ../.aws/credentials ../project.txt 2>&1`,
    );
    expect(inside).toContain('main');
    expect(inside).not.toContain('FROM-THE-HOME');
    expect(inside).not.toContain('code');
    await backend.close();
    // Writable there too, and the home itself as the working directory is the user's choice: visible.
    backend = (await sandboxBackendFactory.create({
      workingDir: home,
      options: {},
      access: { workingDir: 'read-write', network: false },
      env: { HOME: home },
    })) as SandboxBackend;
    expect(await runIn(backend, home, 'echo new > made.txt && cat project.txt')).toBe('code');
    expect(await readFile(join(home, 'made.txt'), 'utf8')).toBe('new\n');
  });

  it("starts when rho's home lies inside the user's home, with the working directory outside it or between them", async () => {
    // ~/.config/rho inside ~: both hidden; the inner one must not be hidden again under the empty
    // tmpfs of the outer (bubblewrap could not find it and the container did not start).
    const home = join(outside, 'nested-home');
    const rhoHome = join(home, '.config', 'rho');
    await mkdir(rhoHome, { recursive: true });
    await writeFile(join(rhoHome, 'databases.yaml'), 'password: hunter2\n');
    await mkdir(join(home, 'project', '.config', 'rho'), { recursive: true });
    await writeFile(join(home, 'project', '.config', 'rho', 'databases.yaml'), 'password: inner\n');
    await writeFile(join(home, 'project', 'main.txt'), 'main');
    const create = (workingDir: string, hiddenRhoHome: string) =>
      sandboxBackendFactory.create({
        workingDir,
        options: {},
        access: { workingDir: 'read-only', network: false },
        env: { HOME: home, RHO_HOME: hiddenRhoHome },
      }) as Promise<SandboxBackend>;
    backend = await create(work, rhoHome);
    expect(await run(backend, `cat ${rhoHome}/databases.yaml 2>&1; echo end`)).not.toContain('hunter2');
    await backend.close();
    // The working directory between the two: rho's home under it is hidden after the bind.
    const project = join(home, 'project');
    backend = await create(project, join(project, '.config', 'rho'));
    const between = await runIn(backend, project, 'cat main.txt; cat .config/rho/databases.yaml 2>&1; echo end');
    expect(between).toContain('main');
    expect(between).not.toContain('inner');
    await backend.close();
  });

  it("runs in an isolated workspace inside rho's home: the workspace read-write, the rest of the home absent", async () => {
    // rho's home where it is by default (~/.config/rho), a session's workspace in it, and what
    // else the home holds: another session's workspace, its trace, an approval answer.
    const home = join(outside, 'ws-home');
    const rhoHome = join(home, '.config', 'rho');
    const workspace = join(rhoHome, 'workspaces', 'aaaa1111');
    await mkdir(join(workspace, 'src'), { recursive: true });
    await writeFile(join(workspace, 'src', 'main.txt'), 'main');
    await mkdir(join(rhoHome, 'workspaces', 'bbbb2222'), { recursive: true });
    await writeFile(join(rhoHome, 'workspaces', 'bbbb2222', 'theirs.txt'), 'THEIRS');
    await mkdir(join(rhoHome, 'sessions', 'bbbb2222'), { recursive: true });
    await writeFile(join(rhoHome, 'sessions', 'bbbb2222', 'trace.jsonl'), 'TRACE');
    await mkdir(join(rhoHome, 'approvals'), { recursive: true });
    await writeFile(join(rhoHome, 'databases.yaml'), 'password: hunter2\n');
    backend = (await sandboxBackendFactory.create({
      workingDir: workspace,
      options: {},
      access: { workingDir: 'read-write', network: false },
      env: { HOME: home, RHO_HOME: rhoHome },
    })) as SandboxBackend;
    const inside = await runIn(backend, workspace, 'cat src/main.txt; echo new > made.txt && echo written');
    expect(inside).toBe('mainwritten\n');
    expect(await readFile(join(workspace, 'made.txt'), 'utf8')).toBe('new\n');
    const probe = [
      `cat ${rhoHome}/workspaces/bbbb2222/theirs.txt ${rhoHome}/sessions/bbbb2222/trace.jsonl ${rhoHome}/databases.yaml`,
      `ls -A ${rhoHome} ${rhoHome}/workspaces`,
      `echo x > ${rhoHome}/approvals/answer.json`,
      `echo x > ${rhoHome}/workspaces/bbbb2222/theirs.txt`,
      'echo end',
    ].join('; ');
    const elsewhere = await runIn(backend, workspace, `(${probe}) 2>&1`);
    expect(elsewhere).toContain('end');
    for (const secret of ['THEIRS', 'TRACE', 'hunter2']) expect(elsewhere).not.toContain(secret);
    // The home shows only the way to the workspace: no other session's, no approvals, no sessions.
    expect(elsewhere).toContain(`${rhoHome}:\nworkspaces\n`);
    expect(elsewhere).toContain(`${rhoHome}/workspaces:\naaaa1111\n`);
    expect(readdirSync(join(rhoHome, 'approvals'))).toEqual([]);
    expect(await readFile(join(rhoHome, 'workspaces', 'bbbb2222', 'theirs.txt'), 'utf8')).toBe('THEIRS');
  });

  it('reaches no network unless asked to', async () => {
    const connections: string[] = [];
    const server = createServer((socket) => {
      connections.push('connected');
      socket.end('hello\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const probe = `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3 || echo refused`;
    try {
      const closed = await start();
      expect(await run(closed, `${probe} 2>&1`)).toContain('refused');
      expect(connections).toEqual([]);
      await closed.close();
      const open = await start({ network: true });
      expect(await run(open, probe)).toBe('hello\n');
      expect(connections).toEqual(['connected']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('leaves no process behind once closed, even one that left its process group', async () => {
    const sandbox = await start();
    const marker = `8${Math.floor(Math.random() * 9)}.${Date.now() % 100_000}`;
    await run(sandbox, `setsid sleep ${marker} >/dev/null 2>&1 < /dev/null & echo started`);
    const deadline = Date.now() + 20_000;
    while (processesWith(`sleep ${marker}`).length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // It outlived its call (as on the local machine) ...
    expect(processesWith(`sleep ${marker}`)).toHaveLength(1);
    await sandbox.close();
    // ... but not the container.
    expect(processesWith(`sleep ${marker}`)).toEqual([]);
    await expect(sandbox.stat(work)).rejects.toThrow(/The sandbox has stopped/);
  });

  it('limits processes and file size', async () => {
    const sandbox = await start({ maxProcesses: 24, maxFileBytes: 1024 * 1024 });
    const big = await run(sandbox, 'head -c 2000000 /dev/zero > big 2>&1; echo "status $?"; stat -c %s big');
    expect(big).toMatch(/status 153\n1048576\n/);
    if (sandbox.processLimit === 'none') return;
    const forks = await run(sandbox, 'for i in $(seq 60); do sleep 5 & done 2>&1 | tail -1; pkill sleep; echo end');
    expect(forks).toMatch(/fork: (retry: )?(Resource temporarily unavailable|Interrupted system call)/);
  });

  it('runs the restricted shell of a read-only profile in the container, without a sandbox of its own', async () => {
    await writeFile(join(work, 'data.txt'), 'a\nb\nc\n');
    const sandbox = await start({ writable: false });
    const tools = fsTools({ profile: builtinProfile('readonly')!, workingDir: work, backend: sandbox });
    const restricted = tools.find((tool) => tool.name === 'bash') as Tool<{ command: string }>;
    const counted = await call(restricted, { command: 'cat data.txt | grep -c . ; hostname' }, sandbox);
    expect(JSON.parse(counted.content)).toMatchObject({ output: '3\nrho-sandbox\n' });
    // `< FILE` is read through the backend too.
    const redirected = await call(restricted, { command: 'wc -l < data.txt' }, sandbox);
    expect(JSON.parse(redirected.content)).toMatchObject({ output: '3\n' });
    const refused = await call(restricted, { command: 'touch x' }, sandbox);
    expect(refused.success).toBe(false);
    expect(refused.content).toContain('Command blocked');
  });
});
