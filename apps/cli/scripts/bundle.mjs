// Builds the bundled CLI of the published @rho/cli into bundle/ (`pnpm --filter @rho/cli bundle`;
// the package's `prepack` runs it, so `pnpm pack` ships it): one entry point, bundle/bin.js, with
// every @rho package inlined, code splitting so that what the CLI imports lazily (the dashboard,
// fleet, queue, databases, MCP, eval, OpenTelemetry, exceljs...) stays in chunks loaded on first
// use, and third-party packages left to `import` from node_modules: each must be a dependency (or
// a peer) of @rho/cli, which this script checks. It bundles the tsc build (dist/ of the CLI and of
// the packages), so run `pnpm build` first.
//
// Every module of the bundle is a file at the top of bundle/, so a file that a module finds
// relative to itself (`new URL('./x', import.meta.url)`) is copied or built there:
//   bin.js, chunk-*.js           the CLI (dist/bundled-bin.js and what it imports)
//   rho-core*.js, rho-model-client.js  the @rho entries that tool packages import by name (src/shared-packages.ts)
//   help-<width>.txt             `rho --help`, rendered by the tsc build (dist/)
//   assets/                      the dashboard's web page (@rho/dashboard's dist/assets)
//   datasets/                    the data sets of `rho eval sql` (@rho/eval's datasets, Chinook)
//   sqlite-child.js              the SQLite process of the sqlite tool (@rho/tools-db), self-contained
//   server/sandbox-server.js     the server inside the sandbox backend's container (@rho/backend-sandbox), self-contained
// tree-sitter-bash's grammar, libpg-query's and web-tree-sitter's WebAssembly, ripgrep and
// better-sqlite3 stay in their packages, which the bundle resolves from where it is installed.
import { build } from 'esbuild';
import { cpSync, existsSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('..', import.meta.url));
const dist = join(cli, 'dist');
const out = join(cli, 'bundle');
const manifest = JSON.parse(readFileSync(join(cli, 'package.json'), 'utf8'));

function fail(message) {
  process.stderr.write(`bundle: ${message}\n`);
  process.exit(1);
}

for (const file of ['bundled-bin.js', 'shared-packages.js', 'help-100.txt'])
  if (!existsSync(join(dist, file))) fail(`apps/cli/dist/${file} is missing: run pnpm build first.`);

const { SHARED_ENTRIES } = await import(new URL('../dist/shared-packages.js', import.meta.url).href);

/** The package a bare specifier names: `@scope/name/sub` → `@scope/name`. */
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** The built file of a package's entry, as Node resolves it from the CLI. */
function resolveEntry(specifier) {
  return fileURLToPath(import.meta.resolve(specifier));
}

/** A file of a workspace package's build, found next to its main entry (dist/index.js). */
function packageFile(name, path) {
  const file = join(dirname(resolveEntry(name)), path);
  if (!existsSync(file)) fail(`${name}: ${path} is missing next to its entry: run pnpm build first.`);
  return file;
}

// Third-party packages the CLI declares (a dependency, or a peer it loads when installed).
const declared = new Set([
  ...Object.keys(manifest.dependencies ?? {}),
  ...Object.keys(manifest.peerDependencies ?? {}),
  ...Object.keys(manifest.optionalDependencies ?? {}),
]);
const optionalRho = new Set(Object.keys(manifest.peerDependencies ?? {}).filter((name) => name.startsWith('@rho/')));

/**
 * Third-party packages inlined too: pure JavaScript that reads no files of its own, whose hundreds
 * of installed modules cost more to load at start than the bundled chunk (openai: 236 files,
 * measured in bench/startup). Anything with native code, data files or its own file lookups
 * (yargs reads its locales next to itself) stays an installed package.
 */
const INLINED = new Set(['openai']);

/** Inlines @rho packages (but the CLI's optional peers) and INLINED; leaves every other package to Node. */
function rhoInline(externals) {
  return {
    name: 'rho-inline',
    setup(pluginBuild) {
      pluginBuild.onResolve({ filter: /^[^./]/ }, (args) => {
        if (isBuiltin(args.path)) return { path: args.path, external: true };
        const name = packageName(args.path);
        if ((name.startsWith('@rho/') && !optionalRho.has(name)) || INLINED.has(name)) return undefined;
        const importers = externals.get(name) ?? new Set();
        importers.add(relative(join(cli, '..', '..'), args.importer));
        externals.set(name, importers);
        return { path: args.path, external: true };
      });
    },
  };
}

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22.15',
  // Bundling renames clashing top-level names; keep `.name` of classes and functions as written.
  keepNames: true,
  legalComments: 'none',
  // Whitespace and syntax minified, names kept: the source text V8 keeps of every loaded chunk is
  // part of peak RSS (2.2 MB less, 1.10x -> 1.07x of the bare client in bench/startup). Stack
  // traces map back to the built files through the linked source maps, which Node reads only
  // when asked (`rho --debug` turns them on: bundled-bin.ts).
  minifyWhitespace: true,
  minifySyntax: true,
  sourcemap: 'linked',
  sourcesContent: false,
  logLevel: 'warning',
};

/** Whether two folders hold the same files with the same contents. */
function sameTree(a, b) {
  const list = (directory) =>
    existsSync(directory) ? readdirSync(directory, { recursive: true, withFileTypes: true }) : undefined;
  const files = (directory) =>
    list(directory)
      ?.filter((entry) => entry.isFile())
      .map((entry) => relative(directory, join(entry.parentPath, entry.name)))
      .sort();
  const left = files(a);
  const right = files(b);
  if (left === undefined || right === undefined || left.join('\n') !== right.join('\n')) return false;
  return left.every((file) => readFileSync(join(a, file)).equals(readFileSync(join(b, file))));
}

const staging = join(cli, `.bundle-${process.pid}`);
rmSync(staging, { recursive: true, force: true });
const externals = new Map();
try {
  await build({
    ...common,
    entryPoints: {
      bin: join(dist, 'bundled-bin.js'),
      ...Object.fromEntries(
        Object.entries(SHARED_ENTRIES).map(([specifier, file]) => [file.replace(/\.js$/, ''), resolveEntry(specifier)]),
      ),
    },
    splitting: true,
    chunkNames: 'chunk-[hash]',
    outdir: staging,
    plugins: [rhoInline(externals)],
  });
  // Processes of their own: one file each, nothing shared with the CLI's chunks.
  for (const [name, entry] of [
    ['sqlite-child', packageFile('@rho/tools-db', 'internal/drivers/sqlite-child.js')],
    ['server/sandbox-server', packageFile('@rho/backend-sandbox', 'server/sandbox-server.js')],
  ]) {
    await build({
      ...common,
      entryPoints: { [name]: entry },
      outdir: staging,
      plugins: [rhoInline(externals)],
    });
  }
  const undeclared = [...externals.keys()].filter((name) => !declared.has(name)).sort();
  if (undeclared.length > 0)
    fail(
      `the bundle imports ${undeclared.map((name) => `${name} (from ${[...externals.get(name)][0]})`).join(', ')}, which @rho/cli does not declare: add it to the dependencies (or optional peers) of apps/cli/package.json.`,
    );
  for (const file of readdirSync(dist).filter((name) => /^help-\d+\.txt$/.test(name)))
    cpSync(join(dist, file), join(staging, file));
  cpSync(packageFile('@rho/dashboard', 'assets'), join(staging, 'assets'), { recursive: true });
  const datasets = join(dirname(resolveEntry('@rho/eval')), '..', 'datasets');
  if (!existsSync(datasets)) fail('@rho/eval: datasets/ is missing.');
  cpSync(datasets, join(staging, 'datasets'), { recursive: true });
  // What the bundle imports from node_modules, for pack:all and the tests.
  writeFileSync(
    join(staging, 'externals.json'),
    `${JSON.stringify(Object.fromEntries([...externals.keys()].sort().map((name) => [name, [...externals.get(name)].sort()])), null, 2)}\n`,
  );
  // The same inputs give the same bundle: an unchanged one stays as it is, so that two packs at
  // once (the tests pack in parallel) do not swap it under each other; a changed one is swapped
  // in with renames, so a reader sees the old bundle or the new one, never half of one.
  if (!sameTree(staging, out)) {
    const old = `${out}.old-${process.pid}`;
    for (let attempt = 0; ; attempt += 1) {
      try {
        if (existsSync(out)) renameSync(out, `${old}-${attempt}`);
        renameSync(staging, out);
        break;
      } catch (error) {
        if (attempt >= 5 || !['ENOENT', 'ENOTEMPTY', 'EEXIST'].includes(error.code)) throw error;
      }
    }
    for (const entry of readdirSync(cli).filter((name) => name.startsWith(`bundle.old-${process.pid}-`)))
      rmSync(join(cli, entry), { recursive: true, force: true });
  }
} finally {
  rmSync(staging, { recursive: true, force: true });
}
