// Where a syntax error that stopped an import is. Node's SyntaxError of an ES module names neither
// the file nor the line (it prints them only for an error nobody catches), and a tool package's
// entry may import the file that has it: the files Node loads meanwhile are recorded, and after a
// SyntaxError they are checked with `node --check` until one fails.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The module files Node loaded while watched, and those that got as far as importing others. */
export interface ModuleLoads {
  files: { path: string; format: 'module' | 'commonjs' }[];
  /** Files whose imports were resolved: they compiled, so they have no syntax error. */
  parents: Set<string>;
  stop(): void;
}

/** Records the module files Node loads until `stop()` (nothing where Node has no `registerHooks`). */
export function watchModuleLoads(): ModuleLoads {
  const loads: ModuleLoads = { files: [], parents: new Set(), stop: () => undefined };
  const register = (nodeModule as Partial<typeof nodeModule>).registerHooks;
  if (typeof register !== 'function') return loads;
  const hooks = register({
    resolve(specifier, context, nextResolve) {
      if (context.parentURL?.startsWith('file:') === true) loads.parents.add(fileURLToPath(context.parentURL));
      return nextResolve(specifier, context);
    },
    load(url, context, nextLoad) {
      const result = nextLoad(url, context);
      if (url.startsWith('file:') && (result.format === 'module' || result.format === 'commonjs'))
        loads.files.push({ path: fileURLToPath(url), format: result.format });
      return result;
    },
  });
  loads.stop = () => hooks.deregister();
  return loads;
}

/** At most this many files are checked (a process each). */
const MAX_CHECKS = 20;

/**
 * `file:line` of the syntax error, among the files loaded under `folder` (the package's own files
 * first, then its node_modules; newest first) that did not get as far as importing; undefined
 * when none fails the check. Runs only after a SyntaxError.
 */
export function syntaxErrorPlace(loads: ModuleLoads, folder: string): string | undefined {
  const inside = folder.endsWith(sep) ? folder : `${folder}${sep}`;
  const candidates = [...loads.files]
    .reverse()
    .filter(({ path }) => path.startsWith(inside) && !loads.parents.has(path))
    .sort(
      (a, b) =>
        Number(a.path.includes(`${sep}node_modules${sep}`)) - Number(b.path.includes(`${sep}node_modules${sep}`)),
    );
  for (const { path, format } of candidates.slice(0, MAX_CHECKS)) {
    let source: string;
    try {
      source = readFileSync(path, 'utf8');
    } catch {
      continue;
    }
    const check = spawnSync(process.execPath, [`--input-type=${format}`, '--check'], {
      input: source,
      encoding: 'utf8',
      env: {},
      timeout: 10_000,
    });
    if (check.status === 0 || check.error !== undefined) continue;
    const line = /^\[stdin\]:(\d+)/m.exec(check.stderr)?.[1];
    return line === undefined ? path : `${path}:${line}`;
  }
  return undefined;
}
