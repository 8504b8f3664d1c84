import { describe, expect, it } from 'vitest';
import { createBackendRegistry, type BackendCreateContext } from './backend-registry.js';
import { BackendUnavailableError, ConfigError } from './errors.js';
import { createLocalBackend } from './local-backend.js';

const context = (options: Record<string, unknown> = {}): BackendCreateContext => ({
  workingDir: '/',
  options,
  access: { workingDir: 'read-write', network: false },
  env: {},
  origin: '--backend',
});

describe('backend registry', () => {
  it('knows local, and refuses an unknown name with the known ones, as a configuration error', async () => {
    const registry = createBackendRegistry();
    expect(registry.names()).toEqual(['local']);
    expect((await registry.create('local', context())).name).toBe('local');
    const error = await registry.create('daytona', context()).catch((caught: unknown) => caught);
    expect(BackendUnavailableError.isInstance(error)).toBe(true);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as BackendUnavailableError).backend).toBe('daytona');
    expect((error as Error).message).toBe("Unknown backend 'daytona' (--backend): choose one of local.");
  });

  it('loads a factory only when its backend is selected, with the options and access', async () => {
    const registry = createBackendRegistry();
    const loaded: string[] = [];
    const seen: BackendCreateContext[] = [];
    registry.register('fake', 'a fake', async () => {
      loaded.push('fake');
      return {
        name: 'fake',
        description: 'a fake',
        create: async (given) => {
          seen.push(given);
          return { ...createLocalBackend(), name: 'fake' };
        },
      };
    });
    expect(loaded).toEqual([]);
    expect(registry.describe('fake')).toBe('a fake');
    const backend = await registry.create('fake', context({ network: true }));
    expect(backend.name).toBe('fake');
    expect(loaded).toEqual(['fake']);
    expect(seen[0]?.options).toEqual({ network: true });
  });

  it('turns a package that cannot be loaded into a configuration error that says what to do', async () => {
    const registry = createBackendRegistry();
    registry.register('remote', 'remote', () => Promise.reject(new Error("Cannot find package '@rho/backend-remote'")));
    await expect(registry.create('remote', context())).rejects.toThrow(
      "Backend 'remote' (--backend) cannot be loaded: Cannot find package '@rho/backend-remote'. Install its package next to rho, or choose another backend.",
    );
  });

  it('local takes no options', async () => {
    await expect(createBackendRegistry().create('local', context({ network: true }))).rejects.toThrow(
      "Backend 'local' takes no options (got network in --backend).",
    );
  });
});
