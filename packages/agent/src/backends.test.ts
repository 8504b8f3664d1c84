import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtinProfile, sandboxWrapper } from '@rho/permissions';
import { describe, expect, it } from 'vitest';
import { backendAccess, defaultBackendName, defaultBackendRegistry } from './backends.js';

const bubblewrap = (await sandboxWrapper()).available;

describe('backends of @rho/agent', () => {
  it('knows local, sandbox and daytona', () => {
    expect(defaultBackendRegistry().names()).toEqual(['local', 'sandbox', 'daytona']);
  });

  it('makes a daytona backend through the registry only with credentials (exit 2 otherwise, nothing sent)', async () => {
    await expect(
      defaultBackendRegistry().create('daytona', {
        workingDir: tmpdir(),
        options: {},
        access: backendAccess(builtinProfile('readonly')!),
        env: {},
        origin: '--backend',
      }),
    ).rejects.toThrow(
      /Backend 'daytona' \(--backend\): The daytona backend needs a Daytona API key: set DAYTONA_API_KEY/,
    );
  });

  it('gives a writable working directory to profiles that may change files, and no network', () => {
    expect(backendAccess(builtinProfile('readonly')!)).toEqual({ workingDir: 'read-only', network: false });
    expect(backendAccess(builtinProfile('developer')!)).toEqual({ workingDir: 'read-write', network: false });
    expect(backendAccess(builtinProfile('unrestricted')!)).toEqual({ workingDir: 'read-write', network: false });
  });

  it('defaults to sandbox for unrestricted and eval only where bubblewrap works', async () => {
    expect(await defaultBackendName({ name: 'readonly' })).toBe('local');
    expect(await defaultBackendName({ name: 'developer' })).toBe('local');
    expect(await defaultBackendName({ name: 'eval' })).toBe(bubblewrap ? 'sandbox' : 'local');
    expect(await defaultBackendName({ name: 'unrestricted' }, { searchPath: '/nonexistent-rho' })).toBe('local');
  });

  it.skipIf(!bubblewrap)('makes a sandbox backend through the registry, loading its package then', async () => {
    const workingDir = await mkdtemp(join(tmpdir(), 'rho-agent-backends-'));
    try {
      const backend = await defaultBackendRegistry().create('sandbox', {
        workingDir,
        options: { network: false },
        access: backendAccess(builtinProfile('readonly')!),
        env: process.env,
      });
      expect(backend.name).toBe('sandbox');
      expect(backend.isolation).toMatchObject({ workingDir: 'read-only', network: false });
      await backend.close?.();
    } finally {
      await rm(workingDir, { recursive: true, force: true });
    }
  });
});
