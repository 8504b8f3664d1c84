// `@rho/core/backend-registry`: choosing an execution backend by name (the registry, the factory a
// backend package exports, the local backend's factory). What `@rho/agent` and backend packages use;
// an application passes `backend:` to the Agent instead.
import { BackendUnavailableError } from './errors.js';
import type { ExecutionBackend } from './execution-backend.js';
import { createLocalBackend } from './local-backend.js';

/** What a backend factory is told when a backend is made for a session. */
export interface BackendCreateContext {
  /** The session's working directory, absolute, as the tools will see it. */
  workingDir: string;
  /**
   * The backend's own options, as written in the agent config under `backend:` (without `name`),
   * for example `{ network: true }` for `backend: { name: sandbox, network: true }`. The factory
   * validates them and rejects unknown keys with a {@link BackendUnavailableError}.
   */
  options: Readonly<Record<string, unknown>>;
  /** What the permission profile lets the tools do, for backends that enforce it themselves. */
  access: BackendAccess;
  /**
   * rho's environment, for the backend's own settings (`DAYTONA_API_KEY`). A backend never hands
   * it to the processes it runs.
   */
  env: Readonly<Record<string, string | undefined>>;
  /** Where the options came from (`--backend`, a config file), named in error messages. */
  origin?: string;
}

/** What the permission profile grants the tools, as a backend can enforce it. */
export interface BackendAccess {
  /** `read-write` when the profile lets the tools change files (a writing shell or file writes). */
  workingDir: 'read-write' | 'read-only';
  /** Whether processes may reach the network. */
  network: boolean;
}

/** Makes backends of one kind. Registered by name in a {@link BackendRegistry}. */
export interface BackendFactory {
  /** The name users select it by (`--backend NAME`, `backend: NAME`). */
  readonly name: string;
  /** One line for help and error messages. */
  readonly description: string;
  /**
   * Makes a backend, ready to run tools (a container started, a remote sandbox created).
   * @throws BackendUnavailableError when it cannot run here or its options are wrong, saying what to fix.
   */
  create(context: BackendCreateContext): Promise<ExecutionBackend>;
}

/** Loads a factory when it is first needed, so a backend's package is imported only when selected. */
export type BackendFactoryLoader = () => BackendFactory | Promise<BackendFactory>;

/** The known backends of a version of rho, by name. */
export interface BackendRegistry {
  /** Adds (or replaces) a backend. `load` runs only when the backend is selected. */
  register(name: string, description: string, load: BackendFactoryLoader): void;
  /** The registered names, in registration order. */
  names(): string[];
  /** The one-line description of a registered backend. */
  describe(name: string): string | undefined;
  /**
   * Makes the backend `name` for a session.
   * @throws BackendUnavailableError for an unknown name, a package that cannot be loaded, or a
   * backend that cannot start here.
   */
  create(name: string, context: BackendCreateContext): Promise<ExecutionBackend>;
}

/**
 * A registry of backend factories with `local` registered. Applications register the others
 * (`@rho/agent`'s `defaultBackendRegistry()` adds `sandbox`, and `daytona` when available).
 */
export function createBackendRegistry(): BackendRegistry {
  const entries = new Map<string, { description: string; load: BackendFactoryLoader }>();
  const registry: BackendRegistry = {
    register(name, description, load) {
      entries.set(name, { description, load });
    },
    names: () => [...entries.keys()],
    describe: (name) => entries.get(name)?.description,
    async create(name, context) {
      const entry = entries.get(name);
      const origin = context.origin === undefined ? '' : ` (${context.origin})`;
      if (entry === undefined) {
        throw new BackendUnavailableError({
          backend: name,
          message: `Unknown backend '${name}'${origin}: choose one of ${[...entries.keys()].join(', ')}.`,
        });
      }
      let factory: BackendFactory;
      try {
        factory = await entry.load();
      } catch (error) {
        if (BackendUnavailableError.isInstance(error)) throw error;
        throw new BackendUnavailableError({
          backend: name,
          message: `Backend '${name}'${origin} cannot be loaded: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}. Install its package next to rho, or choose another backend.`,
          cause: error,
        });
      }
      return factory.create(context);
    },
  };
  registry.register('local', localBackendFactory.description, () => localBackendFactory);
  return registry;
}

/** The `local` backend's factory: processes and files of this machine, no options. */
export const localBackendFactory: BackendFactory = {
  name: 'local',
  description: 'tools run on this machine, as rho itself (no isolation beyond the permission profile)',
  async create(context) {
    const keys = Object.keys(context.options);
    if (keys.length > 0) {
      throw new BackendUnavailableError({
        backend: 'local',
        message: `Backend 'local' takes no options (got ${keys.join(', ')}${context.origin === undefined ? '' : ` in ${context.origin}`}).`,
      });
    }
    return createLocalBackend();
  },
};
