import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BackendUnavailableError } from '@rho/core';
import type { BackendCreateContext } from '@rho/core/backend-registry';
import { sandboxWrapper } from '@rho/permissions';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSandboxBackend, type SandboxBackend } from './sandbox-backend.js';
import { sandboxBackendFactory } from './sandbox-backend-factory.js';

const available = (await sandboxWrapper()).available;
let work: string;
let backend: SandboxBackend | undefined;
beforeEach(async () => {
  work = await realpath(await mkdtemp(join(tmpdir(), 'rho-sandbox-backend-')));
});
afterEach(async () => {
  await backend?.close();
  backend = undefined;
  await rm(work, { recursive: true, force: true });
});

const context = (options: Record<string, unknown>, env: Record<string, string | undefined> = process.env) =>
  ({
    workingDir: work,
    options,
    access: { workingDir: 'read-only', network: false },
    env,
    origin: 'agent.yaml',
  }) satisfies BackendCreateContext;

describe('sandbox backend factory', () => {
  it('rejects unknown options and wrong types, saying what it takes', async () => {
    await expect(sandboxBackendFactory.create(context({ netwrk: true }))).rejects.toThrow(
      "Backend 'sandbox' (agent.yaml) has no option 'netwrk': it takes network, working_dir, max_processes, max_file_bytes, max_memory, tmp_size, env, hide.",
    );
    await expect(sandboxBackendFactory.create(context({ max_memory: 'lots' }))).rejects.toThrow(
      "Backend 'sandbox' (agent.yaml): 'max_memory' must be a size: bytes, or a number with K, M, G or T such as 512M (got \"lots\").",
    );
    const error = await sandboxBackendFactory.create(context({ max_processes: -1 })).catch((caught: unknown) => caught);
    expect(BackendUnavailableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      "Backend 'sandbox' (agent.yaml): 'max_processes' must be a whole number above 0 (got -1).",
    );
  });

  it('says what to install where bubblewrap is missing', async () => {
    const error = await sandboxBackendFactory
      .create(context({}, { PATH: join(work, 'nothing-here') }))
      .catch((caught: unknown) => caught);
    expect(BackendUnavailableError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap');
  });

  it.skipIf(!available)('follows the profile: a read-only working directory unless options say otherwise', async () => {
    const made = await sandboxBackendFactory.create(context({}));
    backend = made as SandboxBackend;
    expect(made.isolation).toMatchObject({ workingDir: 'read-only', network: false });
    await backend.close();
    backend = (await sandboxBackendFactory.create(
      context({ working_dir: 'read-write', network: true }),
    )) as SandboxBackend;
    expect(backend.isolation).toMatchObject({ workingDir: 'read-write', network: true });
  });
});

describe.skipIf(!available)('sandbox backend', () => {
  it('keeps the output of a process that ended before its output was read', async () => {
    backend = await createSandboxBackend({ workingDir: work });
    const child = backend.spawn({ argv: ['echo', 'kept'], cwd: work });
    await child.exited;
    // Read only now, well after the exit (Node drops a child's unread stdout when it exits).
    await new Promise((resolve) => setTimeout(resolve, 100));
    const chunks: Buffer[] = [];
    await new Promise<void>((resolve) => {
      child.stdout!.on('data', (chunk: Buffer) => chunks.push(chunk));
      child.stdout!.once('end', resolve);
    });
    expect(Buffer.concat(chunks).toString()).toBe('kept\n');
  });

  it('fails every call once closed, and close can be called twice', async () => {
    backend = await createSandboxBackend({ workingDir: work });
    expect(await backend.homeDir()).toBe('/tmp/home');
    await backend.close();
    await backend.close();
    await expect(backend.readdir(work)).rejects.toMatchObject({ code: 'EPIPE' });
    const late = backend.spawn({ argv: ['true'], cwd: work });
    expect((await late.exited).spawnError?.message).toMatch(/The sandbox has stopped/);
  });
});
