// `pnpm pack:all [--out DIR] [--no-build]`: the tarball of every publishable workspace package
// (those not `private`), packed by `pnpm pack` (which turns `workspace:` and `catalog:` into
// versions, and runs @rho/cli's `prepack`: its bundle) into one folder, `packs/` at the root by
// default; then checks the folder and prints how to install the CLI and the library from it,
// until the packages are on a registry. It builds first (`pnpm build`) unless --no-build.
//
// `node scripts/pack-all.mjs --check DIR`: only checks a folder of tarballs: every dependency of
// one @rho package on another (dependencies, optionalDependencies, peerDependencies) is pinned to
// the exact version of the other's tarball in the folder, and that tarball is there (an optional
// peer may be missing); @rho/cli depends on no @rho package (its bundle inlines them), so its
// tarball installs alone. A failure is one line on stderr naming the package, and exit code 1.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

const root = fileURLToPath(new URL('..', import.meta.url));
const FIELDS = ['dependencies', 'optionalDependencies', 'peerDependencies'];

/** Stops with one line on stderr. */
function fail(message) {
  process.stderr.write(`pack:all: ${message}\n`);
  process.exit(1);
}

/** The text of `package/package.json` in a .tgz (a gzipped tar), read without a tar program. */
export function tarballManifest(file) {
  const data = gunzipSync(readFileSync(file));
  let offset = 0;
  let longName;
  while (offset + 512 <= data.length) {
    const header = data.subarray(offset, offset + 512);
    if (header.every((byte) => byte === 0)) break;
    const field = (start, length) => header.toString('utf8', start, start + length).replace(/\0.*$/s, '');
    const size = Number.parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1);
    const prefix = field(345, 155);
    const name = longName ?? (prefix === '' ? field(0, 100) : `${prefix}/${field(0, 100)}`);
    const body = data.subarray(offset + 512, offset + 512 + size);
    longName = undefined;
    if (type === 'L') longName = body.toString('utf8').replace(/\0.*$/s, '');
    else if (name === 'package/package.json' && (type === '0' || type === '')) return JSON.parse(body.toString('utf8'));
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  throw new Error(`${file} has no package/package.json`);
}

/** The tarballs of a folder by package name: `{ file, manifest }`. Fails on a name packed twice. */
export function readPacks(directory) {
  if (!existsSync(directory)) fail(`${directory} does not exist.`);
  const packs = new Map();
  for (const file of readdirSync(directory)
    .filter((name) => name.endsWith('.tgz'))
    .sort()) {
    let manifest;
    try {
      manifest = tarballManifest(join(directory, file));
    } catch (error) {
      fail(`cannot read ${join(directory, file)}: ${error instanceof Error ? error.message : String(error)}`);
    }
    const known = packs.get(manifest.name);
    if (known !== undefined)
      fail(`${manifest.name} is in ${directory} twice (${known.file} and ${file}): remove the one not meant.`);
    packs.set(manifest.name, { file, manifest });
  }
  return packs;
}

/** Checks a folder of tarballs (see the top of this file); returns them by name. */
export function checkPacks(directory) {
  const packs = readPacks(directory);
  if (packs.size === 0) fail(`${directory} holds no tarballs (.tgz).`);
  for (const [name, { file, manifest }] of packs) {
    for (const field of FIELDS) {
      for (const [dependency, range] of Object.entries(manifest[field] ?? {})) {
        if (!dependency.startsWith('@rho/')) continue;
        const optional =
          field === 'optionalDependencies' ||
          (field === 'peerDependencies' && manifest.peerDependenciesMeta?.[dependency]?.optional === true);
        const target = packs.get(dependency);
        if (target === undefined) {
          if (optional) continue;
          fail(`${name} (${file}) depends on ${dependency}, which is missing from ${directory}: pack it there too.`);
        }
        if (range !== target.manifest.version)
          fail(
            `${name} (${file}) pins ${dependency} to "${range}" in ${field}, not to ${target.manifest.version}, the version of ${target.file}: every @rho dependency must name the exact version packed with it.`,
          );
      }
    }
  }
  const cli = packs.get('@rho/cli');
  if (cli !== undefined) {
    const inlined = Object.keys(cli.manifest.dependencies ?? {}).filter((name) => name.startsWith('@rho/'));
    if (inlined.length > 0)
      fail(
        `@rho/cli (${cli.file}) depends on ${inlined.join(', ')}: its bundle inlines the @rho packages, so it must not (see apps/cli/scripts/bundle.mjs).`,
      );
    if (!Object.values(cli.manifest.bin ?? {}).every((path) => path.replace(/^\.\//, '').startsWith('bundle/')))
      fail(
        `@rho/cli (${cli.file}): its bin is not the bundle (${JSON.stringify(cli.manifest.bin)}): pack it with pnpm pack.`,
      );
  }
  return packs;
}

/** `name` and the @rho packages it needs (not its optional ones), each once. */
function closure(packs, name, found = new Set()) {
  if (found.has(name) || !packs.has(name)) return found;
  found.add(name);
  const { manifest } = packs.get(name);
  for (const dependency of Object.keys(manifest.dependencies ?? {}))
    if (dependency.startsWith('@rho/')) closure(packs, dependency, found);
  for (const [dependency] of Object.entries(manifest.peerDependencies ?? {}))
    if (dependency.startsWith('@rho/') && manifest.peerDependenciesMeta?.[dependency]?.optional !== true)
      closure(packs, dependency, found);
  return found;
}

/** A path to show in a command: relative to the current directory when it is inside it. */
function shown(path) {
  const relativePath = relative(process.cwd(), path);
  return relativePath !== '' && !relativePath.startsWith('..') && !isAbsolute(relativePath) ? relativePath : path;
}

/** The two install commands for the tarballs of `directory`. */
export function installCommands(directory, packs) {
  const tarball = (name) => shown(join(directory, packs.get(name).file));
  const library = [...closure(packs, '@rho/agent')].sort((a, b) =>
    a === '@rho/agent' ? -1 : b === '@rho/agent' ? 1 : a.localeCompare(b),
  );
  return {
    cli: packs.has('@rho/cli') ? `npm install -g --ignore-scripts ${tarball('@rho/cli')}` : undefined,
    library: library.length > 0 ? `npm install --ignore-scripts ${library.map(tarball).join(' ')}` : undefined,
  };
}

function parseArguments(argv) {
  const options = { out: join(root, 'packs'), build: true, check: undefined };
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index];
    if (argument === '--out' || argument === '--check') {
      const value = argv[index + 1];
      if (value === undefined || value.startsWith('--')) fail(`${argument} needs a folder.`);
      if (argument === '--out') options.out = resolve(value);
      else options.check = resolve(value);
      index += 1;
    } else if (argument.startsWith('--out=')) options.out = resolve(argument.slice('--out='.length));
    else if (argument === '--no-build') options.build = false;
    else fail(`unknown argument ${argument} (use --out DIR, --no-build, or --check DIR).`);
  }
  return options;
}

/** The workspace's publishable packages: `{ name, version, path }`. */
function publishable() {
  const listed = JSON.parse(
    execFileSync('pnpm', ['ls', '--recursive', '--depth', '-1', '--json'], { cwd: root, encoding: 'utf8' }),
  );
  return listed.filter((entry) => entry.private !== true && entry.version !== undefined);
}

async function main() {
  const options = parseArguments(process.argv.slice(2));
  if (options.check !== undefined) {
    const packs = checkPacks(options.check);
    process.stdout.write(
      `pack:all: ${options.check}: ${packs.size} tarballs, every @rho dependency pinned and present\n`,
    );
    return;
  }
  if (options.build) {
    const built = spawnSync('pnpm', ['build'], { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
    if (built.status !== 0) fail('pnpm build failed (above).');
  }
  mkdirSync(options.out, { recursive: true });
  const packages = publishable();
  // Earlier tarballs of these packages (another version, say) would be two of one package.
  const names = new Set(packages.map(({ name }) => name));
  for (const file of readdirSync(options.out).filter((entry) => entry.endsWith('.tgz'))) {
    let name;
    try {
      name = tarballManifest(join(options.out, file)).name;
    } catch {
      continue;
    }
    if (names.has(name)) rmSync(join(options.out, file));
  }
  for (const { name, path } of packages) {
    const packed = spawnSync('pnpm', ['pack', '--pack-destination', options.out, '--json'], {
      cwd: path,
      encoding: 'utf8',
    });
    if (packed.status !== 0)
      fail(`pnpm pack of ${name} failed: ${(packed.stderr || packed.stdout).trim().split('\n').at(-1)}`);
    const { filename } = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('{')));
    process.stdout.write(`packed ${name} → ${shown(filename)}\n`);
  }
  const packs = checkPacks(options.out);
  for (const { name } of packages)
    if (!packs.has(name)) fail(`${name} was packed but its tarball is not in ${options.out}.`);
  const { cli, library } = installCommands(options.out, packs);
  process.stdout.write(
    [
      `pack:all: ${packs.size} tarballs in ${shown(options.out)}, every @rho dependency pinned to the version packed with it.`,
      // No install scripts: rho needs none (tree-sitter-bash's would build a native binding rho does not load).
      'Install the rho CLI (one tarball; third-party packages come from the npm registry):',
      `  ${cli}`,
      'Install the library (@rho/agent, with the @rho packages it needs) into your project:',
      `  ${library}`,
      '',
    ].join('\n'),
  );
}

// Run as a script (not when imported for its functions).
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
