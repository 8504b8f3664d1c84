// The recorded public surface of each package (issue 34): every name that every entry of a
// package's `exports` map exports, with its kind and, for values, a short signature, as the
// TypeScript checker sees it in the sources. `contributing/api/<package>.api.md` holds the
// record; `test/public-surface.test.ts` computes the surface again and fails when it differs, and
// `pnpm surface:update` (`node scripts/public-surface.mjs --update`) rewrites the records.
//
// The surface is read from the sources, not from `dist/`: an import of a workspace package
// (`@rho/model-client`, `@rho/core/internal`) resolves to the source file behind the entry it
// names, so nothing needs to be built first.
import { existsSync, readFileSync, readdirSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'packages', 'core', 'package.json'));
const ts = require('typescript');

/** Where the records live, one file per package. */
export const recordDirectory = join(root, 'contributing', 'api');

/** The command that rewrites the records. */
export const updateCommand = 'pnpm surface:update';

/**
 * Every workspace package under `packages/` and the entries of its `exports` map:
 * `{ name, directory, entries: [{ specifier, subpath, source }] }`, `source` being the `.ts` file
 * the entry's `dist/` file is built from.
 */
export function workspacePackages() {
  const found = [];
  for (const dir of readdirSync(join(root, 'packages')).sort()) {
    const manifestPath = join(root, 'packages', dir, 'package.json');
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    const entries = [];
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      if (subpath.endsWith('package.json')) continue;
      const built = typeof target === 'string' ? target : (target.types ?? target.import);
      if (built === undefined) continue;
      const source = join(
        'packages',
        dir,
        built
          .replace(/^\.\/dist\//, 'src/')
          .replace(/\.d\.ts$/, '.ts')
          .replace(/\.js$/, '.ts'),
      );
      if (!existsSync(join(root, source))) continue;
      const specifier = subpath === '.' ? manifest.name : `${manifest.name}/${subpath.slice(2)}`;
      entries.push({ specifier, subpath, source });
    }
    entries.sort((a, b) => (a.subpath === '.' ? -1 : b.subpath === '.' ? 1 : a.subpath < b.subpath ? -1 : 1));
    found.push({ name: manifest.name, directory: join('packages', dir), dir, entries });
  }
  return found;
}

function compilerOptions() {
  const base = JSON.parse(readFileSync(join(root, 'tooling', 'tsconfig', 'base.json'), 'utf8')).compilerOptions;
  const converted = ts.convertCompilerOptionsFromJson(base, root).options;
  return { ...converted, noEmit: true, declaration: false, declarationMap: false, sourceMap: false };
}

/** A program over every entry's source, workspace imports resolved to the sources. */
export function createSurfaceProgram(packages = workspacePackages()) {
  const bySpecifier = new Map();
  for (const pkg of packages)
    for (const entry of pkg.entries) bySpecifier.set(entry.specifier, join(root, entry.source));
  const options = compilerOptions();
  const host = ts.createCompilerHost(options, true);
  host.resolveModuleNameLiterals = (literals, containingFile, _redirect, resolvedOptions) =>
    literals.map((literal) => {
      const source = bySpecifier.get(literal.text);
      if (source !== undefined) {
        return {
          resolvedModule: { resolvedFileName: source, extension: ts.Extension.Ts, isExternalLibraryImport: false },
        };
      }
      return ts.resolveModuleName(literal.text, containingFile, resolvedOptions, host);
    });
  const rootNames = [...bySpecifier.values()];
  return ts.createProgram({ rootNames, options, host });
}

const VALUE_FORMAT = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseAliasDefinedOutsideCurrentScope;
/** Past this length a signature is cut (the record is for review, the checker has the rest). */
const MAX_SIGNATURE = 300;

/**
 * `import("/abs/node_modules/.pnpm/yaml@2.9.1/node_modules/yaml/dist/index")`, as the checker
 * prints a type it cannot name, becomes `import("yaml")`; a workspace path becomes relative.
 */
function withoutMachinePaths(text) {
  return text.replace(/import\("([^"]+)"\)/g, (whole, path) => {
    const inModules = path.lastIndexOf('/node_modules/');
    if (inModules >= 0) {
      const parts = path.slice(inModules + '/node_modules/'.length).split('/');
      return `import("${parts[0].startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]}")`;
    }
    return path.startsWith(root) ? `import("${relative(root, path)}")` : whole;
  });
}

function shorten(text) {
  const oneLine = withoutMachinePaths(text).replace(/\s+/g, ' ');
  return oneLine.length > MAX_SIGNATURE ? `${oneLine.slice(0, MAX_SIGNATURE - 1)}…` : oneLine;
}

/** The kind and the short signature of one exported symbol. */
function describe(checker, symbol, typeOnly, location) {
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const flags = target.flags;
  const declaration = target.declarations?.[0];
  let kind;
  if (flags & ts.SymbolFlags.Class) kind = 'class';
  else if (flags & ts.SymbolFlags.Function) kind = 'function';
  else if (flags & ts.SymbolFlags.Enum) kind = 'enum';
  else if (flags & ts.SymbolFlags.Variable) kind = 'const';
  else if (flags & ts.SymbolFlags.ValueModule) kind = 'namespace';
  else if (flags & ts.SymbolFlags.Interface) kind = 'interface';
  else if (flags & ts.SymbolFlags.TypeAlias) kind = 'type';
  else kind = 'type';
  if (kind === 'const' && declaration && ts.isVariableDeclaration(declaration)) {
    const list = declaration.parent;
    if (list && !(list.flags & ts.NodeFlags.Const)) kind = 'let';
  }
  const isValue = ['class', 'function', 'enum', 'const', 'let', 'namespace'].includes(kind);
  if (!isValue || typeOnly) {
    // A value exported with `export type` is a type to the importer.
    return { kind: 'type', detail: isValue ? `${kind}, exported as a type only` : kind };
  }
  const type = checker.getTypeOfSymbolAtLocation(target, location);
  let signature;
  if (kind === 'function') {
    signature = type
      .getCallSignatures()
      .map((sig) => checker.signatureToString(sig, undefined, VALUE_FORMAT))
      .join('; ');
  } else if (kind === 'class') {
    const constructors = type.getConstructSignatures();
    const heritage = declaration && ts.isClassDeclaration(declaration) ? declaration.heritageClauses : undefined;
    const base = heritage?.find((clause) => clause.token === ts.SyntaxKind.ExtendsKeyword)?.types[0];
    const params = constructors
      .map((sig) => {
        const text = checker.signatureToString(sig, undefined, VALUE_FORMAT);
        return text.replace(/:\s*[^:]*$/, '').trim() || '()';
      })
      .join('; ');
    signature = `new ${params}${base ? ` extends ${base.getText()}` : ''}`;
  } else if (kind === 'enum' || kind === 'namespace') {
    signature = '';
  } else {
    signature = checker.typeToString(type, undefined, VALUE_FORMAT);
  }
  return { kind: 'value', detail: signature ? `${kind} ${shorten(signature)}` : kind };
}

/** Whether the entry file exports `name` with `export type` (or `export { type name }`). */
function typeOnlyExports(sourceFile) {
  const names = new Set();
  for (const statement of sourceFile.statements) {
    if (!ts.isExportDeclaration(statement) || !statement.exportClause || !ts.isNamedExports(statement.exportClause)) {
      continue;
    }
    for (const element of statement.exportClause.elements) {
      if (statement.isTypeOnly || element.isTypeOnly) names.add(element.name.text);
    }
  }
  return names;
}

/**
 * The surface now: `Map<package name, { pkg, entries: [{ specifier, source, names: [{ name, kind,
 * detail, declaredIn }] }] }>`, names sorted.
 */
export function currentSurface(packages = workspacePackages(), program = createSurfaceProgram(packages)) {
  const checker = program.getTypeChecker();
  const surface = new Map();
  for (const pkg of packages) {
    const entries = [];
    for (const entry of pkg.entries) {
      const sourceFile = program.getSourceFile(join(root, entry.source));
      if (sourceFile === undefined) throw new Error(`${entry.source}: not in the program`);
      const moduleSymbol = checker.getSymbolAtLocation(sourceFile);
      const typeOnly = typeOnlyExports(sourceFile);
      const names = [];
      for (const symbol of moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : []) {
        const name = symbol.getName();
        const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
        const declaredIn = target.declarations?.[0]
          ? relative(root, target.declarations[0].getSourceFile().fileName)
          : undefined;
        names.push({ name, ...describe(checker, symbol, typeOnly.has(name), sourceFile), declaredIn });
      }
      names.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      entries.push({ ...entry, names });
    }
    surface.set(pkg.name, { pkg, entries });
  }
  return surface;
}

/** The record file of one package. */
export function recordPath(pkg) {
  return join(recordDirectory, `${pkg.dir}.api.md`);
}

/** One line of the record: `value Agent: class new (options?: AgentOptions)`. */
function recordLine(entry) {
  return `${entry.kind} ${entry.name}: ${entry.detail}`;
}

/** The text of a package's record. */
export function renderRecord(pkg, entries) {
  const lines = [
    `# ${pkg.name}: recorded public surface`,
    '',
    '<!-- Written by `' + updateCommand + '` (scripts/public-surface.mjs --update); do not edit by hand. -->',
    '',
    'Every name each entry of `exports` in package.json exports: `value` or `type`, then the',
    'declaration kind and, for values, the signature the TypeScript checker prints.',
    '`test/public-surface.test.ts` fails when this differs from the sources.',
  ];
  for (const entry of entries) {
    const internal = /(?:^|\/)internal$/.test(entry.subpath);
    lines.push(
      '',
      `## \`${entry.specifier}\` (${entry.source}): ${entry.names.length} names${internal ? ', no semver promise' : ''}`,
      '',
      '```text',
      ...entry.names.map(recordLine),
      '```',
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The recorded surface of a package as read back from its file: `Map<specifier, Map<name, line>>`. */
export function parseRecord(text) {
  const entries = new Map();
  let current;
  let inBlock = false;
  for (const line of text.split('\n')) {
    const heading = /^## `([^`]+)`/.exec(line);
    if (heading) {
      current = new Map();
      entries.set(heading[1], current);
      continue;
    }
    if (line.startsWith('```')) {
      inBlock = !inBlock;
      continue;
    }
    if (inBlock && current && line.trim() !== '') {
      const match = /^(?:value|type) ([^:]+):/.exec(line);
      if (match) current.set(match[1], line);
    }
  }
  return entries;
}

/**
 * What changed between a record and the sources, per entry: names added, removed, and changed
 * (kind or signature). An entry absent from one side counts all its names.
 */
export function compareSurface(recorded, current) {
  const differences = [];
  const specifiers = new Set([...recorded.keys(), ...current.keys()]);
  for (const specifier of specifiers) {
    const before = recorded.get(specifier) ?? new Map();
    const after = current.get(specifier) ?? new Map();
    const added = [...after.keys()].filter((name) => !before.has(name));
    const removed = [...before.keys()].filter((name) => !after.has(name));
    const changed = [...after.keys()]
      .filter((name) => before.has(name) && before.get(name) !== after.get(name))
      .map((name) => ({ name, before: before.get(name), after: after.get(name) }));
    if (added.length + removed.length + changed.length > 0) differences.push({ specifier, added, removed, changed });
  }
  return differences;
}

/** The current surface of a package in the shape `parseRecord` returns. */
export function surfaceLines(entries) {
  return new Map(
    entries.map((entry) => [entry.specifier, new Map(entry.names.map((name) => [name.name, recordLine(name)]))]),
  );
}

/** A readable account of the differences, ending with the command that updates the record. */
export function describeDifferences(differences) {
  const lines = [];
  for (const { specifier, added, removed, changed } of differences) {
    lines.push(`${specifier}:`);
    for (const name of added) lines.push(`  + ${name} (exported, not in the record)`);
    for (const name of removed) lines.push(`  - ${name} (in the record, no longer exported)`);
    for (const { name, before, after } of changed) lines.push(`  ~ ${name}\n      was: ${before}\n      now: ${after}`);
  }
  lines.push(
    '',
    `The public surface changed without its record (contributing/api/*.api.md). If the change is meant, run \`${updateCommand}\` and commit the record with it; see contributing/public-surface.md.`,
  );
  return lines.join('\n');
}

/** Compares every package's record with the sources; `[]` when all agree. */
export function checkAll(surface = currentSurface()) {
  const differences = [];
  for (const { pkg, entries } of surface.values()) {
    const path = recordPath(pkg);
    const recorded = existsSync(path) ? parseRecord(readFileSync(path, 'utf8')) : new Map();
    differences.push(...compareSurface(recorded, surfaceLines(entries)));
  }
  const known = new Set([...surface.values()].map(({ pkg }) => `${pkg.dir}.api.md`));
  if (existsSync(recordDirectory)) {
    for (const file of readdirSync(recordDirectory)) {
      if (file.endsWith('.api.md') && !known.has(file)) {
        const recorded = parseRecord(readFileSync(join(recordDirectory, file), 'utf8'));
        differences.push(...compareSurface(recorded, new Map()));
      }
    }
  }
  return differences;
}

/** Rewrites every record from the sources (and removes the records of packages that are gone). */
export function updateAll(surface = currentSurface()) {
  mkdirSync(recordDirectory, { recursive: true });
  const written = new Set();
  for (const { pkg, entries } of surface.values()) {
    const path = recordPath(pkg);
    writeFileSync(path, renderRecord(pkg, entries));
    written.add(path);
  }
  for (const file of readdirSync(recordDirectory)) {
    const path = join(recordDirectory, file);
    if (file.endsWith('.api.md') && !written.has(path)) rmSync(path);
  }
  return [...written];
}

/**
 * Types a public entry exposes that no public entry exports: for every name of every entry that
 * is not `internal`, the declarations its signature reaches (parameters, results, properties,
 * base types; not function bodies, not private members), followed through workspace declarations.
 * Each result is `{ name, declaredIn, via, exportedBy }`: `via` is the public name it was reached
 * from, `exportedBy` the internal entries that export it (empty: none). A user of `via` cannot
 * import the type it mentions. Utility types (`Simplify`, `DistributiveOmit`) are reported too.
 */
export function exposedUnexported(packages = workspacePackages(), program = createSurfaceProgram(packages)) {
  const checker = program.getTypeChecker();
  const resolve = (symbol) => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);
  const isInternal = (entry) => /(?:^|\/)internal$/.test(entry.subpath);
  const publicTargets = new Set();
  const internalTargets = new Map();
  const seeds = [];
  for (const pkg of packages) {
    for (const entry of pkg.entries) {
      const file = program.getSourceFile(join(root, entry.source));
      const moduleSymbol = file && checker.getSymbolAtLocation(file);
      for (const symbol of moduleSymbol ? checker.getExportsOfModule(moduleSymbol) : []) {
        const target = resolve(symbol);
        if (isInternal(entry)) {
          if (!internalTargets.has(target)) internalTargets.set(target, []);
          internalTargets.get(target).push(entry.specifier);
        } else {
          publicTargets.add(target);
          seeds.push({ target, via: `${entry.specifier} ${symbol.getName()}` });
        }
      }
    }
  }
  const inWorkspace = (symbol) =>
    (symbol.declarations ?? []).some((declaration) => {
      const path = relative(root, declaration.getSourceFile().fileName);
      return path.startsWith('packages/') && !path.includes('node_modules');
    });
  const references = (symbol) => {
    const found = [];
    const isPrivate = (node) =>
      (node.name && ts.isPrivateIdentifier(node.name)) ||
      (ts.canHaveModifiers(node) && ts.getModifiers(node)?.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword));
    const visit = (node) => {
      if (ts.isBlock(node)) return;
      if ((ts.isPropertyDeclaration(node) || ts.isMethodDeclaration(node) || ts.isGetAccessor(node)) && isPrivate(node))
        return;
      let name;
      if (ts.isTypeReferenceNode(node)) name = node.typeName;
      else if (ts.isExpressionWithTypeArguments(node)) name = node.expression;
      else if (ts.isTypeQueryNode(node)) name = node.exprName;
      if (name) {
        const symbolAt = checker.getSymbolAtLocation(ts.isQualifiedName(name) ? name.right : name);
        if (symbolAt) found.push(resolve(symbolAt));
      }
      ts.forEachChild(node, visit);
    };
    for (const declaration of symbol.declarations ?? []) {
      if (ts.isVariableDeclaration(declaration)) {
        if (declaration.type) visit(declaration.type);
      } else if (ts.isFunctionDeclaration(declaration)) {
        declaration.typeParameters?.forEach(visit);
        declaration.parameters.forEach(visit);
        if (declaration.type) visit(declaration.type);
      } else if (!ts.isSourceFile(declaration)) {
        visit(declaration);
      }
    }
    return found;
  };
  const via = new Map();
  const queue = [];
  for (const seed of seeds) {
    if (!via.has(seed.target)) {
      via.set(seed.target, seed.via);
      queue.push(seed.target);
    }
  }
  while (queue.length > 0) {
    const symbol = queue.shift();
    for (const reached of references(symbol)) {
      if (via.has(reached) || !inWorkspace(reached)) continue;
      if (reached.flags & (ts.SymbolFlags.TypeParameter | ts.SymbolFlags.Property | ts.SymbolFlags.Method)) continue;
      via.set(reached, via.get(symbol));
      queue.push(reached);
    }
  }
  const results = [];
  for (const [symbol, from] of via) {
    if (publicTargets.has(symbol) || !inWorkspace(symbol)) continue;
    const declaration = symbol.declarations?.[0];
    results.push({
      name: symbol.getName(),
      declaredIn: declaration ? relative(root, declaration.getSourceFile().fileName) : undefined,
      via: from,
      exportedBy: internalTargets.get(symbol) ?? [],
    });
  }
  return results.sort((a, b) => (a.via < b.via ? -1 : a.via > b.via ? 1 : 0));
}
