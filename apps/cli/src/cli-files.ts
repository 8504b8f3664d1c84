// Files of the CLI itself, found from this module. It sits at the top of dist/ in the tsc build
// and its code at the top of bundle/ in the bundled CLI of the published package (every module of
// the bundle is a file at the top of bundle/, see scripts/bundle.mjs), so one relative path holds
// in both: keep this module in src/, not in a subfolder.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The CLI's entry point (`dist/bin.js`, or `bundle/bin.js` of the bundled CLI), to start another rho with. */
export function cliBinPath(): string {
  return fileURLToPath(new URL('./bin.js', import.meta.url));
}

/** The CLI's version, from its package.json. */
export function cliVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}
