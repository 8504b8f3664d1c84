// `node scripts/public-surface.mjs [--markdown]`: for each package's public entry (src/index.ts),
// every exported name and where it is imported from outside the package (other packages, apps,
// examples, bench, scripts, workspace tests). contributing/public-surface.md was written from its
// output; run it again after a change to an index to see what the change leaves unused.
// Names are found with the TypeScript parser: static imports, re-exports, `import('...')` with a
// destructuring or a namespace variable, and `import('...').Name` in types.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(root, 'packages', 'core', 'package.json'));
const ts = require('typescript');

const markdown = process.argv.includes('--markdown');

/** Every workspace package with a `src/index.ts`: name, directory. */
function packagesWithIndex() {
  const found = [];
  for (const dir of readdirSync(join(root, 'packages')).sort()) {
    const index = join(root, 'packages', dir, 'src', 'index.ts');
    if (!existsSync(index)) continue;
    const { name } = JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8'));
    found.push({ name, directory: join('packages', dir), index });
  }
  return found;
}

function parse(path) {
  return ts.createSourceFile(path, readFileSync(join(root, path), 'utf8'), ts.ScriptTarget.Latest, true);
}

/** The names an index exports, with whether each is a type and the file it comes from. */
function indexExports(index) {
  const source = parse(relative(root, index));
  const names = [];
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement)) continue;
    const from = statement.moduleSpecifier?.text ?? '';
    if (statement.exportClause === undefined) {
      names.push({ name: `* from ${from}`, type: false, from });
      continue;
    }
    if (!ts.isNamedExports(statement.exportClause)) continue;
    for (const element of statement.exportClause.elements) {
      names.push({ name: element.name.text, type: statement.isTypeOnly || element.isTypeOnly, from });
    }
  }
  return names;
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
function usedInside(pkg, name, from) {
  const defining = join(pkg.directory, 'src', from.replace(/^\.\//, '').replace(/\.js$/, '.ts'));
  const pattern = new RegExp(`\\b${name.replace(/[^\w]/g, '')}\\b`, 'g');
  let tests = false;
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (walk(path)) return true;
        continue;
      }
      if (!path.endsWith('.ts') || path === join(pkg.directory, 'src', 'index.ts')) continue;
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

const packages = packagesWithIndex();
const files = workspaceFiles();
const usesByFile = new Map(files.map((path) => [path, usedNames(path)]));

for (const pkg of packages) {
  const exported = indexExports(pkg.index);
  const rows = exported.map((entry) => {
    const users = new Set();
    for (const [path, uses] of usesByFile) {
      if (path.startsWith(`${pkg.directory}/`)) continue;
      if (uses.some(([specifier, name]) => specifier === pkg.name && (name === entry.name || name === '*'))) {
        const parts = path.split('/');
        users.add(parts[0] === 'packages' || parts[0] === 'apps' || parts[0] === 'examples' ? parts[1] : parts[0]);
      }
    }
    return { ...entry, users: [...users].sort(), inside: usedInside(pkg, entry.name, entry.from) };
  });
  const unused = rows.filter((row) => row.users.length === 0);
  if (markdown) {
    console.log(`\n### ${pkg.name}: ${unused.length} of ${rows.length} names unused outside\n`);
    console.log('| name | kind | from | used inside the package |');
    console.log('| --- | --- | --- | --- |');
    for (const row of unused) {
      console.log(`| \`${row.name}\` | ${row.type ? 'type' : 'value'} | \`${row.from}\` | ${row.inside} |`);
    }
  } else {
    console.log(`\n${pkg.name}: ${rows.length} names, ${unused.length} unused outside the package`);
    for (const row of rows) {
      const where = row.users.length > 0 ? row.users.join(', ') : `(inside: ${row.inside})`;
      console.log(`  ${row.type ? 'type ' : 'value'} ${row.name.padEnd(40)} ${where}`);
    }
  }
}
