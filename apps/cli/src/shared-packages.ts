// The bundled CLI (the published @rho/cli, built by scripts/bundle.mjs) inlines the @rho packages;
// a module it loads from outside (a tool package, @rho/model-gguf) that imports `@rho/core` by
// name must get the CLI's own copy, not a second one, so that `instanceof` and the error classes
// work across the two, and without installing anything. The bundle writes each entry below as a
// file of its own (sharing its modules with the rest of the bundle), and its entry point maps the
// names to them with a module resolve hook.
import * as nodeModule from 'node:module';

/** The entries of @rho packages a module outside the CLI may import by name, and the bundle's file of each. */
export const SHARED_ENTRIES: Readonly<Record<string, string>> = {
  '@rho/core': 'rho-core.js',
  '@rho/core/atif': 'rho-core-atif.js',
  '@rho/core/backend-registry': 'rho-core-backend-registry.js',
  '@rho/core/local-backend': 'rho-core-local-backend.js',
  '@rho/core/settings': 'rho-core-settings.js',
  '@rho/model-client': 'rho-model-client.js',
};

/**
 * Resolves the names of {@link SHARED_ENTRIES}, imported by a module outside `bundleDir`, to the
 * bundle's files in `bundleDir`; every other import resolves as before. Needs `registerHooks`
 * (Node 22.15 and later); on an older Node it does nothing (the CLI then stops with its message
 * about the Node version).
 */
export function shareBundledPackages(bundleDir: URL): void {
  const register = (nodeModule as Partial<typeof nodeModule>).registerHooks;
  if (typeof register !== 'function') return;
  const inside = bundleDir.href.endsWith('/') ? bundleDir.href : `${bundleDir.href}/`;
  const targets = new Map(Object.entries(SHARED_ENTRIES).map(([name, file]) => [name, new URL(file, inside).href]));
  register({
    resolve(specifier, context, nextResolve) {
      const target = targets.get(specifier);
      if (target === undefined || context.parentURL === undefined || context.parentURL.startsWith(inside))
        return nextResolve(specifier, context);
      return { url: target, shortCircuit: true };
    },
  });
}
