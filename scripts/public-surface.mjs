// `node scripts/public-surface.mjs [--markdown | --update | --check | --exposed]`.
//
// Without a flag (or with `--markdown`, as tables): for each entry of each package's `exports`
// (`.`, `./internal`, `./testing`, ...), every exported name and where it is imported from
// outside the package (other packages, apps, examples, bench, scripts, workspace tests).
// contributing/public-surface.md was written from its output; run it after a change to an index
// to see what the change leaves unused.
//
// `--update` (`pnpm surface:update`) rewrites the recorded surface, contributing/api/*.api.md,
// from the sources; `--check` (`pnpm surface:check`) compares them and exits 1 on a difference,
// as test/public-surface.test.ts does (scripts/api-surface.mjs computes both). `--exposed` lists
// the types that a public entry's signatures mention and no public entry exports.
//
// Imports are found with the TypeScript parser: static imports, re-exports, `import('...')` with
// a destructuring or a namespace variable, and `import('...').Name` in types.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { createRequire } from 'node:module';
import { checkAll, currentSurface, describeDifferences, exposedUnexported, root, updateAll } from './api-surface.mjs';

const require = createRequire(join(root, 'packages', 'core', 'package.json'));
const ts = require('typescript');

if (process.argv.includes('--update')) {
  const written = updateAll();
  console.log(`wrote ${written.length} records: ${written.map((path) => relative(root, path)).join(', ')}`);
  process.exit(0);
}
if (process.argv.includes('--exposed')) {
  const exposed = exposedUnexported();
  console.log(`${exposed.length} types a public entry's signatures mention that no public entry exports:`);
  for (const { name, declaredIn, via, exportedBy } of exposed) {
    const where = exportedBy.length > 0 ? `in ${exportedBy.join(', ')}` : 'exported by no entry';
    console.log(`  ${name} (${declaredIn}; ${where}) reached from ${via}`);
  }
  process.exit(0);
}
if (process.argv.includes('--check')) {
  const differences = checkAll();
  if (differences.length === 0) {
    console.log('public surface: every record matches the sources');
    process.exit(0);
  }
  console.error(describeDifferences(differences));
  process.exit(1);
}

const markdown = process.argv.includes('--markdown');

function parse(path) {
  return ts.createSourceFile(path, readFileSync(join(root, path), 'utf8'), ts.ScriptTarget.Latest, true);
}

/** Files of the workspace that may import a package: tracked sources outside `dist/`. */
function workspaceFiles() {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    encoding: 'utf8',
  });
  return listed
    .split('\n')
    .filter((path) => /\.(?:ts|mts|cts|js|mjs|cjs)$/.test(path) && !/(?:^|\/)(?:dist|node_modules)\//.test(path));
}

/** For one file: [specifier, name] pairs of every `@rho/*` name it uses. */
function usedNames(path) {
  const source = parse(path);
  const text = source.text;
  const uses = [];
  const namespaceUses = (specifier, variable) => {
    for (const match of text.matchAll(new RegExp(`\\b${variable}\\.(\\w+)`, 'g'))) uses.push([specifier, match[1]]);
  };
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const specifier = node.moduleSpecifier.text;
      const bindings = node.importClause?.namedBindings;
      if (bindings && ts.isNamedImports(bindings)) {
        for (const element of bindings.elements) uses.push([specifier, (element.propertyName ?? element.name).text]);
      } else if (bindings && ts.isNamespaceImport(bindings)) {
        namespaceUses(specifier, bindings.name.text);
      }
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const specifier = node.moduleSpecifier.text;
      if (node.exportClause && ts.isNamedExports(node.exportClause)) {
        for (const element of node.exportClause.elements)
          uses.push([specifier, (element.propertyName ?? element.name).text]);
      } else if (node.exportClause === undefined) {
        uses.push([specifier, '*']);
      }
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      const specifier = node.arguments[0].text;
      let outer = node.parent;
      if (outer && ts.isAwaitExpression(outer)) outer = outer.parent;
      while (outer && ts.isParenthesizedExpression(outer)) outer = outer.parent;
      if (outer && ts.isVariableDeclaration(outer)) {
        if (ts.isObjectBindingPattern(outer.name)) {
          for (const element of outer.name.elements) {
            const name = element.propertyName ?? element.name;
            if (ts.isIdentifier(name)) uses.push([specifier, name.text]);
          }
        } else if (ts.isIdentifier(outer.name)) {
          namespaceUses(specifier, outer.name.text);
        }
      } else if (
        outer &&
        ts.isBinaryExpression(outer) &&
        outer.operatorToken.kind === ts.SyntaxKind.EqualsToken &&
        ts.isIdentifier(outer.left)
      ) {
        namespaceUses(specifier, outer.left.text);
      } else if (outer && ts.isPropertyAccessExpression(outer)) {
        uses.push([specifier, outer.name.text]);
      }
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const literal = node.argument.literal;
      if (ts.isStringLiteral(literal) && node.qualifier) {
        const first = ts.isIdentifier(node.qualifier) ? node.qualifier : node.qualifier.left;
        if (ts.isIdentifier(first)) uses.push([literal.text, first.text]);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return uses;
}

/**
 * Where the package itself uses `name`: `source` (a file other than index.ts; in the file that
 * defines it, a second mention), `tests` (only its tests), or `none` (defined and exported only).
 */
function usedInside(pkg, entrySource, name, defining) {
  const pattern = new RegExp(`\\b${name.replace(/[^\w]/g, '')}\\b`, 'g');
  let tests = false;
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (walk(path)) return true;
        continue;
      }
      if (!path.endsWith('.ts') || path === entrySource) continue;
      const count = readFileSync(join(root, path), 'utf8').match(pattern)?.length ?? 0;
      if (/\.test\.ts$|\/test-support\/|^[^/]+\/[^/]+\/test\//.test(path)) {
        if (count > 0) tests = true;
      } else if (count > (path === defining ? 1 : 0)) {
        return true;
      }
    }
    return false;
  };
  const inSource =
    walk(join(pkg.directory, 'src')) ||
    (existsSync(join(root, pkg.directory, 'test')) && walk(join(pkg.directory, 'test')));
  return inSource ? 'source' : tests ? 'tests' : 'none';
}

const surface = currentSurface();
const files = workspaceFiles();
const usesByFile = new Map(files.map((path) => [path, usedNames(path)]));

for (const { pkg, entries } of surface.values()) {
  for (const entry of entries) {
    const rows = entry.names.map((exported) => {
      const users = new Set();
      for (const [path, uses] of usesByFile) {
        if (path.startsWith(`${pkg.directory}/`)) continue;
        if (
          uses.some(([specifier, name]) => specifier === entry.specifier && (name === exported.name || name === '*'))
        ) {
          const parts = path.split('/');
          users.add(parts[0] === 'packages' || parts[0] === 'apps' || parts[0] === 'examples' ? parts[1] : parts[0]);
        }
      }
      return {
        ...exported,
        users: [...users].sort(),
        inside: usedInside(pkg, entry.source, exported.name, exported.declaredIn),
      };
    });
    const unused = rows.filter((row) => row.users.length === 0);
    if (markdown) {
      console.log(`\n### ${entry.specifier}: ${unused.length} of ${rows.length} names unused outside\n`);
      console.log('| name | kind | declared in | used inside the package |');
      console.log('| --- | --- | --- | --- |');
      for (const row of unused) {
        console.log(`| \`${row.name}\` | ${row.kind} | \`${row.declaredIn}\` | ${row.inside} |`);
      }
    } else {
      console.log(`\n${entry.specifier}: ${rows.length} names, ${unused.length} unused outside the package`);
      for (const row of rows) {
        const where = row.users.length > 0 ? row.users.join(', ') : `(inside: ${row.inside})`;
        console.log(`  ${row.kind.padEnd(5)} ${row.name.padEnd(40)} ${where}`);
      }
    }
  }
}
