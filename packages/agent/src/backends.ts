import { createBackendRegistry, type BackendAccess, type BackendRegistry } from '@rho/core/backend-registry';
import { sandboxWrapper, type PermissionProfile } from '@rho/permissions';
import type { SandboxLookupOptions } from '@rho/permissions/internal';

/**
 * The backends rho knows: `local`, `sandbox` (a bubblewrap container) and `daytona` (a Daytona
 * cloud sandbox, from the optional package `@rho/backend-daytona`), each package imported
 * only when its backend is selected. A remote backend package plugs in with
 * `registry.register(name, description, () => import(...).then((module) => module.factory))`.
 */
export function defaultBackendRegistry(): BackendRegistry {
  const registry = createBackendRegistry();
  registry.register(
    'sandbox',
    'tools run in a bubblewrap container on this machine (Linux, needs bubblewrap)',
    async () => (await import('@rho/backend-sandbox')).sandboxBackendFactory,
  );
  // An optional package (it brings the Daytona SDK): a clear error names it when it is missing.
  registry.register(
    'daytona',
    'tools run in a Daytona cloud sandbox (needs DAYTONA_API_KEY and @rho/backend-daytona)',
    async () => (await import('@rho/backend-daytona')).daytonaBackendFactory,
  );
  return registry;
}

/**
 * What a profile lets the tools do, as a backend enforces it: the working directory is writable
 * when the shell is unrestricted or file writes are allowed; no built-in profile grants the
 * network (a backend option does: `backend: {name: sandbox, network: true}`).
 */
export function backendAccess(profile: PermissionProfile): BackendAccess {
  const writes = profile.shell === 'unrestricted' || profile.fileWrite !== 'off';
  return { workingDir: writes ? 'read-write' : 'read-only', network: false };
}

/**
 * The backend used when none is chosen: `sandbox` for the `unrestricted` profile (and `eval`, its
 * alias) where bubblewrap works, so an unrestricted shell is contained by default; `local`
 * otherwise.
 */
export async function defaultBackendName(
  profile: Pick<PermissionProfile, 'name'>,
  lookup: SandboxLookupOptions = {},
): Promise<'local' | 'sandbox'> {
  if (profile.name !== 'unrestricted' && profile.name !== 'eval') return 'local';
  return (await sandboxWrapper(lookup)).available ? 'sandbox' : 'local';
}
