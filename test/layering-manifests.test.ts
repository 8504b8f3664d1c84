/**
 * The layering holds in the package manifests too, not only in the imports the linter sees: each
 * `packages/*` package depends (dependencies, peer and optional dependencies) only on the `@rho/*`
 * packages its row of the layering table allows, and its devDependencies add only what its tests
 * may import, plus the private tooling packages. The table is the one the lint rule reads
 * (`layers` in tooling/eslint-config), so the two cannot drift apart.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { layers } from '@rho/eslint-config';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const tooling = readdirSync(join(root, 'tooling')).map((name) => `@rho/${name}`);

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const rho = (deps: Record<string, string> | undefined) =>
  Object.keys(deps ?? {})
    .filter((name) => name.startsWith('@rho/'))
    .sort();

const packages = readdirSync(join(root, 'packages'))
  .filter((name) => existsSync(join(root, 'packages', name, 'package.json')))
  .sort();

describe('package manifests follow the layering', () => {
  it('finds the packages', () => {
    expect(packages).toEqual(expect.arrayContaining(['core', 'model-client', 'permissions', 'tools-fs', 'tools-mcp']));
  });

  for (const name of packages) {
    it(`packages/${name}`, () => {
      const manifest = JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8')) as Manifest;
      // A package missing from the table is "everything else": core only.
      const row = layers[`packages/${name}`] ?? { allow: ['core'] };
      const allowed = row.allow.map((dep) => `@rho/${dep}`);
      const forTests = [...allowed, ...(row.tests ?? []).map((dep) => `@rho/${dep}`), ...tooling];
      const runtime = [
        ...rho(manifest.dependencies),
        ...rho(manifest.peerDependencies),
        ...rho(manifest.optionalDependencies),
      ];
      expect(
        runtime.filter((dep) => !allowed.includes(dep)),
        `${manifest.name} may depend on ${allowed.join(', ') || 'no @rho package'}`,
      ).toEqual([]);
      expect(
        rho(manifest.devDependencies).filter((dep) => !forTests.includes(dep)),
        `${manifest.name}'s devDependencies`,
      ).toEqual([]);
    });
  }
});
