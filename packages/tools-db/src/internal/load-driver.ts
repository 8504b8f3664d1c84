import { ConfigError } from '@rho/core';

const cache = new Map<string, Promise<unknown>>();

/**
 * Imports a database driver the first time a tool needs it, so that `import '@rho/tools-db'`
 * loads none of them. A missing package becomes a ConfigError that says what to install.
 */
export function loadDriver<T>(packageName: string, label: string): Promise<T> {
  let loading = cache.get(packageName);
  if (loading === undefined) {
    loading = import(packageName).catch((error: unknown) => {
      cache.delete(packageName);
      const code = (error as { code?: string }).code;
      if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
        throw new ConfigError({
          code: 'driver_missing',
          message: `The ${label} driver is not installed: add it with \`npm install ${packageName}\` (or pnpm add / yarn add) next to @rho/tools-db in your app, or with \`npm install -g ${packageName}\` for a rho CLI installed with npm -g.`,
          cause: error,
        });
      }
      throw new ConfigError({
        code: 'driver_failed',
        message: `The ${label} driver "${packageName}" failed to load: ${(error as Error).message}`,
        cause: error,
      });
    });
    cache.set(packageName, loading);
  }
  return loading as Promise<T>;
}
