import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { BackendUnavailableError, ConfigError, type ToolContext } from '@rho/core';
import { builtinProfile, sandboxWrapper } from '@rho/permissions';
import { createBashTool, fsTools } from '@rho/tools-fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDaytonaBackend, DaytonaBackendError, daytonaBackendFactory, type DaytonaBackend } from './index.js';
import { startFakeDaytona, type FakeDaytona } from './testing/index.js';

// The fake runs the sandbox's commands under bubblewrap: without it these tests are skipped,
// except in CI, where they must run.
const runnable = (await sandboxWrapper()).available || process.env['CI'] === 'true';
const describeIf = describe.runIf(runnable);

let fake: FakeDaytona;
let local: string;
const opened: DaytonaBackend[] = [];

/** A backend on the fake, closed after the test. */
async function open(options: Parameters<typeof createDaytonaBackend>[0] = {}): Promise<DaytonaBackend> {
  const backend = await createDaytonaBackend({ apiKey: fake.apiKey, apiUrl: fake.apiUrl, environment: {}, ...options });
  opened.push(backend);
  return backend;
}

function contextOn(backend: DaytonaBackend, signal = new AbortController().signal): ToolContext {
  return { signal, sessionId: 'daytona-test', workingDir: backend.workingDir, backend };
}

/** The process requests (execute, sessions and their commands) the fake received since `mark`. */
function processRequests(mark: number) {
  return fake.requests.slice(mark).filter((request) => request.operation.startsWith('ProcessApi.'));
}

async function waitFor(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

beforeAll(async () => {
  if (!runnable) return;
  fake = await startFakeDaytona({ snapshots: ['daytonaio/sandbox', 'rho-python'] });
  local = await mkdtemp(join(tmpdir(), 'rho-daytona-local-'));
}, 60_000);

afterEach(async () => {
  await Promise.all(opened.splice(0).map((backend) => backend.close()));
});

afterAll(async () => {
  if (!runnable) return;
  await fake?.close();
  await rm(local, { recursive: true, force: true });
  // The SDK called nothing the fake does not implement.
  expect(fake.unknownRoutes).toEqual([]);
});

describeIf('creating the sandbox', () => {
  it('runs commands in the sandbox home, with both streams and the exit status', async () => {
    const backend = await open();
    expect(backend.homeDirectory).toBe('/home/daytona');
    const child = backend.spawn({ argv: ['sh', '-c', 'pwd; echo err >&2; exit 3'], cwd: '/home/daytona' });
    const [out, err, exit] = await Promise.all([text(child.stdout!), text(child.stderr!), child.exited]);
    expect({ out, err, exit }).toEqual({ out: '/home/daytona\n', err: 'err\n', exit: { exitCode: 3, signal: null } });
  });

  it('from Daytona’s default snapshot, an image, a snapshot or a Dockerfile', async () => {
    const dockerfile = join(local, 'Dockerfile');
    await writeFile(dockerfile, 'FROM python:3.12-slim\nRUN pip install uv\n');
    const made = [
      await open(),
      await open({ image: 'python:3.12-slim' }),
      await open({ snapshot: 'rho-python' }),
      await open({ dockerfile }),
    ];
    const requests = made.map((backend) => fake.sandboxes.get(backend.sandboxId)?.request);
    expect(requests.map((request) => [request?.snapshot, request?.buildInfo?.dockerfileContent])).toEqual([
      [undefined, undefined],
      [undefined, 'FROM python:3.12-slim\n'],
      ['rho-python', undefined],
      [undefined, 'FROM python:3.12-slim\nRUN pip install uv\n'],
    ]);
    // Labelled, never auto-stopped, the default PATH set.
    expect(requests[0]).toMatchObject({ labels: { rho: 'true' }, autoStopInterval: 0 });
    expect(requests[0]?.env?.['PATH']).toContain('/home/daytona/.local/bin');
  });

  it('refuses two image sources, and a missing Dockerfile, before contacting Daytona', async () => {
    const before = fake.requests.length;
    await expect(open({ snapshot: 'rho-python', dockerfile: join(local, 'Dockerfile') })).rejects.toSatisfy(
      (error) => ConfigError.isInstance(error) && /Cannot use both --snapshot and --dockerfile/.test(error.message),
    );
    await expect(open({ image: 'python:3.12', snapshot: 'rho-python' })).rejects.toThrow(/Cannot use both/);
    await expect(open({ dockerfile: join(local, 'no-such-Dockerfile') })).rejects.toThrow(/Dockerfile not found/);
    expect(fake.requests.length).toBe(before);
  });

  it('an image without what the backend needs (util-linux setsid) is refused, and the sandbox deleted', async () => {
    // A PATH with everything but setsid, outside /tmp and /home (which the fake's sandboxes replace).
    const bin = await mkdtemp('/var/tmp/rho-daytona-bin-');
    for (const program of ['sh', 'kill', 'stat', 'realpath', 'readlink', 'ln', 'base64', 'tail', 'head', 'find']) {
      await symlink(
        execFileSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' }).trim(),
        join(bin, program),
      );
    }
    try {
      const before = new Set(fake.sandboxes.keys());
      const error: unknown = await open({ sandboxEnv: { PATH: bin } }).catch((caught: unknown) => caught);
      expect(DaytonaBackendError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(
        /lacks what the daytona backend runs: setsid, setsid --wait\. Use an image with/,
      );
      const made = [...fake.sandboxes.values()].filter((record) => !before.has(record.dto.id));
      expect(made.map((record) => record.dto.state)).toEqual(['destroyed']);
    } finally {
      await rm(bin, { recursive: true, force: true });
    }
  });

  it('an unknown snapshot is a DaytonaBackendError with the service’s status', async () => {
    const error: unknown = await open({ snapshot: 'no-such-snapshot' }).catch((caught: unknown) => caught);
    expect(DaytonaBackendError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      statusCode: 404,
      message: expect.stringMatching(/Snapshot no-such-snapshot not found/),
    });
  });
});

describeIf('credentials', () => {
  it('no API key is a ConfigError that names DAYTONA_API_KEY, and nothing is sent', async () => {
    const before = fake.requests.length;
    await expect(createDaytonaBackend({ apiUrl: fake.apiUrl, environment: {} })).rejects.toSatisfy(
      (error) => ConfigError.isInstance(error) && /DAYTONA_API_KEY/.test(error.message),
    );
    expect(fake.requests.length).toBe(before);
  });

  it('reads DAYTONA_API_KEY and DAYTONA_API_URL from the environment', async () => {
    const backend = await createDaytonaBackend({
      environment: { DAYTONA_API_KEY: fake.apiKey, DAYTONA_API_URL: fake.apiUrl },
    });
    opened.push(backend);
    expect(fake.sandboxes.get(backend.sandboxId)?.dto.state).toBe('started');
  });

  it('a wrong key is a DaytonaBackendError with status 401 that says what to check', async () => {
    const error: unknown = await createDaytonaBackend({ apiKey: 'wrong', apiUrl: fake.apiUrl, environment: {} }).catch(
      (caught: unknown) => caught,
    );
    expect(DaytonaBackendError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ statusCode: 401, message: expect.stringMatching(/Check DAYTONA_API_KEY/) });
  });

  it('a URL that is not http(s), or where nothing answers, is reported clearly', async () => {
    await expect(createDaytonaBackend({ apiKey: 'k', apiUrl: 'ftp://example', environment: {} })).rejects.toSatisfy(
      (error) => ConfigError.isInstance(error) && /DAYTONA_API_URL is not an http\(s\) URL/.test(error.message),
    );
    const closed = await startFakeDaytona();
    const url = closed.apiUrl;
    await closed.close();
    const error: unknown = await createDaytonaBackend({ apiKey: 'k', apiUrl: url, environment: {} }).catch(
      (caught: unknown) => caught,
    );
    expect(DaytonaBackendError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(`Is the Daytona API reachable at ${url}?`);
  });

  it('through the registry factory, every failure is a BackendUnavailableError (exit 2, before the model)', async () => {
    const context = {
      workingDir: local,
      access: { workingDir: 'read-write' as const, network: false },
      origin: '--backend daytona',
    };
    await expect(daytonaBackendFactory.create({ ...context, options: {}, env: {} })).rejects.toSatisfy(
      (error) => BackendUnavailableError.isInstance(error) && /DAYTONA_API_KEY/.test(error.message),
    );
    await expect(
      daytonaBackendFactory.create({
        ...context,
        options: { snapshot: 'rho-python', dockerfile: 'Dockerfile' },
        env: { DAYTONA_API_KEY: fake.apiKey, DAYTONA_API_URL: fake.apiUrl },
      }),
    ).rejects.toSatisfy((error) => BackendUnavailableError.isInstance(error) && /Cannot use both/.test(error.message));
    await expect(daytonaBackendFactory.create({ ...context, options: { keep: true }, env: {} })).rejects.toThrow(
      /has no option 'keep'/,
    );
    await expect(
      daytonaBackendFactory.create({
        ...context,
        options: {},
        env: { DAYTONA_API_KEY: 'wrong', DAYTONA_API_URL: fake.apiUrl },
      }),
    ).rejects.toSatisfy(
      (error) => BackendUnavailableError.isInstance(error) && /401|Invalid credentials/.test(error.message),
    );
  });
});

describeIf('the sandbox’s life', () => {
  it('close() deletes the sandbox; keepSandbox keeps it', async () => {
    const deleted = await open();
    const kept = await open({ keepSandbox: true });
    const mark = fake.requests.length;
    await deleted.close();
    await kept.close();
    expect(fake.sandboxes.get(deleted.sandboxId)?.dto.state).toBe('destroyed');
    expect(fake.sandboxes.get(kept.sandboxId)?.dto).toMatchObject({ state: 'started', autoStopInterval: 15 });
    const deletes = fake.requests.slice(mark).filter((request) => request.operation === 'SandboxApi.deleteSandbox');
    expect(deletes.map((request) => request.path)).toEqual([`/api/sandbox/${deleted.sandboxId}`]);
    await deleted.close(); // idempotent
  });

  it('the factory works in /home/daytona/<local directory name>, uploads it when asked, and blocks the network by default', async () => {
    const project = join(local, 'my-project');
    await mkdir(join(project, 'src'), { recursive: true });
    await writeFile(join(project, 'src', 'main.py'), 'print("hi")\n');
    const backend = (await daytonaBackendFactory.create({
      workingDir: project,
      options: { upload: true },
      access: { workingDir: 'read-write', network: false },
      env: { DAYTONA_API_KEY: fake.apiKey, DAYTONA_API_URL: fake.apiUrl },
    })) as DaytonaBackend;
    opened.push(backend);
    expect(backend.workingDir).toBe('/home/daytona/my-project');
    expect(backend.isolation).toMatchObject({ description: 'Daytona cloud sandbox', network: false });
    expect(fake.sandboxes.get(backend.sandboxId)?.request.networkBlockAll).toBe(true);
    const read = await fsTools({ profile: builtinProfile('readonly')!, backend })
      .find((tool) => tool.name === 'read')!
      .handle({ callId: 'c', toolName: 'read', arguments: { path: 'src/main.py' } }, contextOn(backend));
    expect(read).toMatchObject({ success: true, content: '     1  print("hi")' });
  });
});

describeIf('moving files', () => {
  it('upload and download copy trees both ways', async () => {
    const backend = await open();
    const source = join(local, 'tree');
    await mkdir(join(source, 'a', 'b'), { recursive: true });
    await writeFile(join(source, 'top.txt'), 'top\n');
    await writeFile(join(source, 'a', 'b', 'deep.bin'), Buffer.from([0, 1, 2, 255]));
    const up = await backend.upload(source, 'uploaded');
    expect(up).toMatchObject({ files: 2, bytes: 8 });
    const sandbox = fake.sandboxes.get(backend.sandboxId)!.sandbox;
    expect(await readFile(sandbox.hostPath('/home/daytona/uploaded/a/b/deep.bin'))).toEqual(
      Buffer.from([0, 1, 2, 255]),
    );
    const target = join(local, 'downloaded');
    const down = await backend.download('/home/daytona/uploaded', target);
    expect(down).toMatchObject({ files: 2, bytes: 8 });
    expect(await readFile(join(target, 'top.txt'), 'utf8')).toBe('top\n');
    expect(await readFile(join(target, 'a', 'b', 'deep.bin'))).toEqual(Buffer.from([0, 1, 2, 255]));
    await backend.download('uploaded/top.txt', join(local, 'single.txt'));
    expect(await readFile(join(local, 'single.txt'), 'utf8')).toBe('top\n');
    await expect(backend.download('/home/daytona/missing', join(local, 'x'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describeIf('commands', () => {
  it('cancelling a run kills the remote process and everything it started', async () => {
    const backend = await open();
    const sandbox = fake.sandboxes.get(backend.sandboxId)!.sandbox;
    const controller = new AbortController();
    const bash = createBashTool({ mode: 'unrestricted', killGraceSeconds: 1 });
    const running = bash.handle(
      { callId: 'c', toolName: 'bash', arguments: { command: 'sleep 300 & sleep 301 & echo started; wait' } },
      contextOn(backend, controller.signal),
    );
    // Both sleeps run in the sandbox (seen from the fake's side, in /proc).
    await waitFor(() => sandbox.processes().length >= 3, 'the command to start');
    controller.abort();
    const result = await running;
    expect(result.metadata).toMatchObject({ cancelled: true, exit_code: -1 });
    await waitFor(() => sandbox.processes().length === 0, 'every process of the command to be gone');
  });

  it('a restricted command the policy refuses never reaches Daytona; an allowed one runs there', async () => {
    const backend = await open();
    const bash = fsTools({ profile: builtinProfile('readonly')!, backend }).find((tool) => tool.name === 'bash')!;
    const mark = fake.requests.length;
    const refused = await bash.handle(
      { callId: 'c', toolName: 'bash', arguments: { command: 'rm -rf /home/daytona/precious' } },
      contextOn(backend),
    );
    expect(refused.success).toBe(false);
    expect(refused.content).toMatch(/^Command blocked/);
    // The tool looked at its working directory (one stat), and sent nothing else: no command ran.
    const sent = processRequests(mark);
    expect(sent.map((request) => request.operation)).toEqual(['ProcessApi.executeCommand']);
    expect(sent[0]?.body).toMatch(/stat -L -c/);
    expect(sent.some((request) => request.body.includes('rm') || request.body.includes('precious'))).toBe(false);

    await backend.writeFileAtomic('/home/daytona/listed.txt', Buffer.from('x'));
    const allowed = await bash.handle(
      { callId: 'c', toolName: 'bash', arguments: { command: 'ls' } },
      contextOn(backend),
    );
    expect(allowed.success).toBe(true);
    expect(JSON.parse(allowed.content).output).toContain('listed.txt');
  });
});

describeIf('lazy loading', () => {
  const dist = new URL('../dist/index.js', import.meta.url);
  it.runIf(existsSync(dist))('importing the package does not load @daytonaio/sdk', async () => {
    const { spawnSync } = await import('node:child_process');
    const { fileURLToPath } = await import('node:url');
    const dir = await mkdtemp(join(tmpdir(), 'rho-daytona-lazy-'));
    await writeFile(
      join(dir, 'hooks.mjs'),
      `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.includes('@daytonaio')) appendFileSync(process.env.RHO_LAZY_LOG, resolved.url + '\\n');
  return resolved;
}`,
    );
    await writeFile(join(dir, 'log'), '');
    const register = `data:text/javascript,import{register}from"node:module";register(${JSON.stringify(new URL(`file://${join(dir, 'hooks.mjs')}`).href)});`;
    const script = `await import(${JSON.stringify(dist.href)}); process.stdout.write('imported');`;
    const child = spawnSync(process.execPath, ['--import', register, '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      encoding: 'utf8',
      env: { ...process.env, RHO_LAZY_LOG: join(dir, 'log') },
    });
    expect(child.status, child.stderr).toBe(0);
    expect(child.stdout).toBe('imported');
    expect(await readFile(join(dir, 'log'), 'utf8')).toBe('');
    await rm(dir, { recursive: true, force: true });
  });
});
