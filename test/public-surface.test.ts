/**
 * The public surface as a contract (issue 34): every name each entry of every `packages/*`
 * package's `exports` map exports (`.`, `./internal`, `./testing`, ...) is recorded, with its kind
 * and a short signature, in `contributing/api/<package>.api.md`. This test computes the surface
 * from the sources with the TypeScript checker (scripts/api-surface.mjs) and fails when a name is
 * added, removed or changes its signature without the record changing in the same commit, as
 * openai-agents-js checks its released API. `pnpm surface:update` rewrites the records; the diff
 * of a record is what a reviewer reads. contributing/public-surface.md says what each entry is for.
 */
import { beforeAll, describe, expect, it } from 'vitest';
// The test runs the very code `pnpm surface:update` runs, which is the root's script, not a package.
// eslint-disable-next-line import-x/no-relative-packages
import * as api from '../scripts/api-surface.mjs';

const { checkAll, compareSurface, currentSurface, describeDifferences, parseRecord, renderRecord, surfaceLines } = api;

let surface: api.Surface;

// One program over every package's sources: parsing them (and the declarations of their
// dependencies) takes a while on a busy machine.
beforeAll(() => {
  surface = currentSurface();
}, 240_000);

describe('the recorded public surface', () => {
  it('matches what every entry of every package exports', () => {
    const differences = checkAll(surface);
    if (differences.length > 0) throw new Error(`\n${describeDifferences(differences)}`);
    expect(differences).toEqual([]);
  });

  it('covers every entry of every package, with names', () => {
    const core = surface.get('@rho/core');
    expect(core?.entries.map((entry) => entry.specifier)).toEqual([
      '@rho/core',
      '@rho/core/atif',
      '@rho/core/backend-registry',
      '@rho/core/internal',
      '@rho/core/local-backend',
      '@rho/core/settings',
      '@rho/core/testing',
    ]);
    for (const { entries } of surface.values()) {
      for (const entry of entries) expect(entry.names.length, entry.specifier).toBeGreaterThan(0);
    }
    const agent = core?.entries[0]?.names.find((name) => name.name === 'Agent');
    expect(agent).toMatchObject({
      kind: 'value',
      detail: expect.stringMatching(/^class new \(options\?: AgentOptions\)/),
    });
    const options = core?.entries[0]?.names.find((name) => name.name === 'AgentOptions');
    expect(options).toMatchObject({ kind: 'type', detail: 'interface' });
  });

  it('names no path of this machine (a type the checker cannot name is `import("package")`)', () => {
    for (const { entries } of surface.values()) {
      for (const entry of entries) {
        for (const name of entry.names) expect(name.detail, `${entry.specifier} ${name.name}`).not.toContain(api.root);
      }
    }
    const loadYaml = surface
      .get('@rho/core')
      ?.entries.find((entry) => entry.specifier === '@rho/core/internal')
      ?.names.find((name) => name.name === 'loadYaml');
    if (loadYaml !== undefined) expect(loadYaml.detail).toContain('import("yaml")');
  });

  it('reads back from its file exactly as the sources give it', () => {
    for (const { pkg, entries } of surface.values()) {
      expect(parseRecord(renderRecord(pkg, entries))).toEqual(surfaceLines(entries));
    }
  });

  it('fails on a name added to or removed from an index, naming it and the update command', () => {
    const core = surface.get('@rho/core');
    if (core === undefined) throw new Error('no @rho/core');
    // The record as `pnpm surface:update` would write it now, read back.
    const recorded = parseRecord(renderRecord(core.pkg, core.entries));
    const main = core.entries[0];
    if (main === undefined) throw new Error('no main entry');

    const withExtra = {
      ...main,
      names: [
        ...main.names,
        { name: 'brandNew', kind: 'value' as const, detail: 'function (): void', declaredIn: undefined },
      ],
    };
    const added = compareSurface(recorded, surfaceLines([withExtra, ...core.entries.slice(1)]));
    expect(added).toEqual([{ specifier: '@rho/core', added: ['brandNew'], removed: [], changed: [] }]);

    const withoutAgent = { ...main, names: main.names.filter((name) => name.name !== 'Agent') };
    const removed = compareSurface(recorded, surfaceLines([withoutAgent, ...core.entries.slice(1)]));
    expect(removed).toEqual([{ specifier: '@rho/core', added: [], removed: ['Agent'], changed: [] }]);

    const moved = compareSurface(recorded, surfaceLines(core.entries.slice(1)));
    expect(moved[0]?.removed).toContain('Agent');

    const message = describeDifferences([...added, ...removed]);
    expect(message).toContain('+ brandNew');
    expect(message).toContain('- Agent');
    expect(message).toContain(api.updateCommand);
  });

  it('fails on a changed signature', () => {
    const core = surface.get('@rho/core');
    if (core === undefined) throw new Error('no @rho/core');
    const recorded = parseRecord(renderRecord(core.pkg, core.entries));
    const [main, ...rest] = core.entries;
    if (main === undefined) throw new Error('no main entry');
    const changedAgent = {
      ...main,
      names: main.names.map((name) => (name.name === 'Agent' ? { ...name, detail: 'class new ()' } : name)),
    };
    const changed = compareSurface(recorded, surfaceLines([changedAgent, ...rest]));
    expect(changed).toHaveLength(1);
    expect(changed[0]?.changed.map((change) => change.name)).toEqual(['Agent']);
  });
});
