import type { ExecutionBackend } from '@rho/core';
import type { FileLookup } from '@rho/permissions';

/**
 * A backend's own file system as the permission checks look at it, or undefined for the local
 * backend (the checks then read this machine's directly, as the tools do).
 */
export function backendFiles(backend: ExecutionBackend | undefined): FileLookup | undefined {
  if (backend === undefined || backend.name === 'local') return undefined;
  return {
    realpath: (path) => backend.realpath(path),
    kind: async (path, follow) => {
      try {
        return (await (follow ? backend.stat(path) : backend.lstat(path))).type;
      } catch {
        return undefined;
      }
    },
    readdir: (path) => backend.readdir(path),
  };
}
