/**
 * The lint rules that carry the architecture (tooling/eslint-config) do refuse what they are
 * meant to refuse, and let the rest through: run on a small workspace written to a temporary
 * directory, each case a file, with the rule ids ESLint reports for it.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { rhoConfig } from '@rho/eslint-config';
import { ESLint } from 'eslint';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const manifest = (name: string) => JSON.stringify({ name, type: 'module' });

const files: Record<string, string> = {
  'package.json': manifest('fixture-workspace'),
  'packages/model-client/package.json': manifest('@rho/model-client'),
  'packages/model-client/src/upward.ts': "import { Agent } from '@rho/core';\nexport const agent = Agent;\n",
  'packages/model-client/src/tooling.ts':
    "import { rhoProject } from '@rho/vitest-config';\nexport const project = rhoProject;\n",
  'packages/core/package.json': manifest('@rho/core'),
  'packages/core/src/down.ts':
    "import { createModelClient } from '@rho/model-client';\nexport const create = createModelClient;\n",
  'packages/core/src/down-testing.ts': "import { x } from '@rho/model-client/testing';\nexport const y = x;\n",
  'packages/core/src/upward.ts': "import { checkSql } from '@rho/permissions';\nexport const check = checkSql;\n",
  'packages/core/src/upward-type.ts': "import type { Profile } from '@rho/permissions';\nexport type P = Profile;\n",
  'packages/core/src/deep.ts': "import { x } from '@rho/model-client/src/x.js';\nexport const y = x;\n",
  'packages/core/src/long.ts': 'export const line = 1;\n'.repeat(401),
  'packages/core/src/long.test.ts': 'export const line = 1;\n'.repeat(500),
  'packages/core/src/short.ts': 'export const line = 1;\n'.repeat(400),
  'packages/permissions/package.json': manifest('@rho/permissions'),
  'packages/permissions/src/cycle-a.ts': "import { b } from './cycle-b.js';\nexport const a = () => b;\n",
  'packages/permissions/src/cycle-b.ts': "import { a } from './cycle-a.js';\nexport const b = () => a;\n",
  'packages/permissions/src/type-cycle-a.ts':
    "import type { B } from './type-cycle-b.js';\nexport interface A { b?: B }\nexport const a = 1;\n",
  'packages/permissions/src/type-cycle-b.ts':
    "import type { A } from './type-cycle-a.js';\nexport interface B { a?: A }\nexport const b = 2;\n",
  'packages/permissions/src/sideways.ts': "import { grep } from '@rho/tools-fs';\nexport const g = grep;\n",
  'packages/tools-fs/package.json': manifest('@rho/tools-fs'),
  'packages/tools-fs/src/dynamic-upward.ts': "export const load = () => import('@rho/monitor');\n",
  'packages/tools-fs/src/dynamic-allowed.ts':
    "export const load = () => Promise.all([import('@rho/core'), import('@rho/permissions'), import('exceljs')]);\n",
  'packages/model-gguf/src/dynamic.test.ts': "export const load = () => import('@rho/core');\n",
  'packages/tools-fs/src/index.ts': "export * from './allowed.js';\nexport { load } from './dynamic-upward.js';\n",
  'packages/tools-fs/src/relative.ts': "import { x } from '../../core/src/down.js';\nexport const y = x;\n",
  'packages/tools-fs/src/allowed.ts':
    "import { a } from '@rho/core';\nimport { b } from '@rho/permissions';\nexport const c = [a, b];\n",
  'packages/tools-fs/test/own-source.test.ts': "import { y } from '../src/allowed.js';\nexport const z = y;\n",
  'packages/monitor/package.json': manifest('@rho/monitor'),
  'packages/monitor/src/prints.ts': "export function report(): void {\n  console.log('hello');\n}\n",
  'packages/monitor/src/cli.ts': "import { main } from '@rho/cli';\nexport const m = main;\n",
  'packages/model-gguf/package.json': manifest('@rho/model-gguf'),
  'packages/model-gguf/src/engine.ts': "import { Agent } from '@rho/core';\nexport const a = Agent;\n",
  'packages/model-gguf/src/engine.test.ts': "import { Agent } from '@rho/core';\nexport const a = Agent;\n",
  'packages/agent/package.json': manifest('@rho/agent'),
  'packages/agent/src/toolset.ts':
    "import { a } from '@rho/tools-db';\nimport { b } from '@rho/tools-fs';\nexport const c = [a, b];\n",
  'packages/agent/src/monitor.ts': "import { a } from '@rho/monitor';\nexport const b = a;\n",
  'packages/eval/package.json': manifest('@rho/eval'),
  'packages/eval/src/run.ts': "import { a } from '@rho/agent';\nexport const b = a;\n",
  'packages/new-thing/package.json': manifest('@rho/new-thing'),
  'packages/new-thing/src/a.ts':
    "import { a } from '@rho/core';\nimport { b } from '@rho/monitor';\nexport const c = [a, b];\n",
  'apps/cli/package.json': manifest('@rho/cli'),
  'apps/cli/src/prints.ts': "import { a } from '@rho/monitor';\nexport function show(): void {\n  console.log(a);\n}\n",
  'examples/embed/package.json': manifest('rho-example-embed'),
  'examples/embed/src/internal.ts': "import { a } from '@rho/core/internal';\nexport const b = a;\n",
  'examples/embed/src/public.ts':
    "import { a } from '@rho/core';\nimport { b } from '@rho/core/testing';\nexport const c = [a, b];\n",
  'apps/cli/src/internal.ts': "import { a } from '@rho/core/internal';\nexport const b = a;\n",
  'examples/embed/src/dynamic-internal.ts': "export const load = () => import('@rho/permissions/internal');\n",
  'integrations/harbor/src/internal.ts': "import { a } from '@rho/core/internal';\nexport const b = a;\n",
  'scripts/internal.mjs': "import { a } from '@rho/tools-db/internal';\nexport const b = a;\n",
  'packages/tools-db/src/internal-use.ts': "import { a } from '@rho/permissions/internal';\nexport const b = a;\n",
  'bench/internal.mjs': "import { a } from '@rho/tools-db/internal';\nexport const b = a;\n",
  'test/internal.test.ts': "import { a } from '@rho/core/internal';\nexport const b = a;\n",
  'bench/relative.mjs': "import { a } from '../packages/core/dist/index.js';\nexport const b = a;\n",
};

let directory: string;
const reported = new Map<string, string[]>();

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'rho-lint-rules-'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(directory, path)), { recursive: true });
    await writeFile(join(directory, path), text);
  }
  const eslint = new ESLint({ cwd: directory, overrideConfigFile: true, overrideConfig: rhoConfig });
  for (const result of await eslint.lintFiles(['.'])) {
    reported.set(
      relative(directory, result.filePath),
      result.messages.map((message) => message.ruleId ?? message.message),
    );
  }
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

const rulesFor = (path: string) => {
  const rules = reported.get(path);
  if (rules === undefined) throw new Error(`${path} was not linted`);
  return rules;
};

describe('the layering', () => {
  it.each([
    'packages/model-client/src/upward.ts',
    'packages/core/src/upward.ts',
    'packages/core/src/upward-type.ts',
    'packages/permissions/src/sideways.ts',
    'packages/monitor/src/cli.ts',
    'packages/model-gguf/src/engine.ts',
    'packages/agent/src/monitor.ts',
    'packages/new-thing/src/a.ts',
    'packages/core/src/deep.ts',
  ])('refuses %s', (path) => {
    expect(rulesFor(path)).toEqual(['no-restricted-imports']);
  });

  it.each([
    'packages/model-client/src/tooling.ts',
    'packages/core/src/down.ts',
    'packages/core/src/down-testing.ts',
    'packages/tools-fs/src/allowed.ts',
    'packages/tools-fs/test/own-source.test.ts',
    'packages/model-gguf/src/engine.test.ts',
    'packages/agent/src/toolset.ts',
    'packages/eval/src/run.ts',
  ])('allows %s', (path) => {
    expect(rulesFor(path)).toEqual([]);
  });

  it('keeps examples to public entries; the CLI may use an internal entry', () => {
    expect(rulesFor('examples/embed/src/internal.ts')).toEqual(['no-restricted-imports']);
    expect(rulesFor('examples/embed/src/public.ts')).toEqual([]);
    expect(rulesFor('apps/cli/src/internal.ts')).toEqual([]);
  });

  it('allows an internal entry only in packages, apps, bench and tests', () => {
    expect(rulesFor('examples/embed/src/dynamic-internal.ts')).toEqual(['no-restricted-syntax']);
    expect(rulesFor('integrations/harbor/src/internal.ts')).toEqual(['no-restricted-imports']);
    expect(rulesFor('scripts/internal.mjs')).toEqual(['no-restricted-imports']);
    expect(rulesFor('packages/tools-db/src/internal-use.ts')).toEqual([]);
    expect(rulesFor('bench/internal.mjs')).toEqual([]);
    expect(rulesFor('test/internal.test.ts')).toEqual([]);
  });

  it('refuses `export *` in a package: an index names what it exports', () => {
    expect(rulesFor('packages/tools-fs/src/index.ts')).toEqual(['no-restricted-syntax']);
  });

  it('holds for import() too', () => {
    expect(rulesFor('packages/tools-fs/src/dynamic-upward.ts')).toEqual(['no-restricted-syntax']);
    expect(rulesFor('packages/tools-fs/src/dynamic-allowed.ts')).toEqual([]);
    expect(rulesFor('packages/model-gguf/src/dynamic.test.ts')).toEqual([]);
  });

  it("refuses a relative path into another package's source or build", () => {
    expect(rulesFor('packages/tools-fs/src/relative.ts')).toEqual([
      'no-restricted-imports',
      'import-x/no-relative-packages',
    ]);
    expect(rulesFor('bench/relative.mjs')).toEqual(['no-restricted-imports']);
  });
});

describe('cycles', () => {
  it('refuses a cycle of value imports, at both ends', () => {
    expect(rulesFor('packages/permissions/src/cycle-a.ts')).toEqual(['import-x/no-cycle']);
    expect(rulesFor('packages/permissions/src/cycle-b.ts')).toEqual(['import-x/no-cycle']);
  });

  it('allows a cycle made only of type imports', () => {
    expect(rulesFor('packages/permissions/src/type-cycle-a.ts')).toEqual([]);
    expect(rulesFor('packages/permissions/src/type-cycle-b.ts')).toEqual([]);
  });
});

describe('printing and size', () => {
  it('refuses console in a package, not in the CLI', () => {
    expect(rulesFor('packages/monitor/src/prints.ts')).toEqual(['no-console']);
    expect(rulesFor('apps/cli/src/prints.ts')).toEqual([]);
  });

  it("refuses a core source file over 400 lines, not a test's", () => {
    expect(rulesFor('packages/core/src/long.ts')).toEqual(['max-lines']);
    expect(rulesFor('packages/core/src/short.ts')).toEqual([]);
    expect(rulesFor('packages/core/src/long.test.ts')).toEqual([]);
  });
});
