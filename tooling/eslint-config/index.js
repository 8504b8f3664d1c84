// The workspace's lint rules, as one flat config: the root `eslint.config.js` re-exports it.
// Only rules that catch real faults are on, and all of them are errors: the layering, value-import
// cycles, printing from library code, `export *` in a package, the size of core's files, and
// ESLint's and typescript-eslint's recommended sets. Style belongs to the formatter (tooling/prettier-config), not to this file.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/**
 * The layering (contributing/decisions.md, D16: "The rules that carry the architecture"): the `@rho/*` packages each
 * workspace package may import, keyed by its directory. A package not listed here may import
 * `@rho/core` only, the rule for "everything else". `tests` adds what only its tests may import.
 */
export const layers = {
  'packages/model-client': { allow: [] },
  'packages/core': { allow: ['model-client'] },
  // An in-process engine behind the model-client contract; its tests run it under a core Agent.
  'packages/model-gguf': { allow: ['model-client'], tests: ['core'] },
  'packages/permissions': { allow: ['core'] },
  'packages/monitor': { allow: ['core'] },
  // The web dashboard reads sessions through the monitor, and a session's changes through the
  // workspace library (loaded when they are asked for); its tests run real sessions over HTTP.
  'packages/dashboard': { allow: ['core', 'monitor', 'workspace'], tests: ['model-client'] },
  'packages/tools-fs': { allow: ['core', 'permissions'] },
  'packages/tools-db': { allow: ['core', 'permissions'] },
  'packages/tools-mcp': { allow: ['core', 'permissions'] },
  // An execution backend; its tests run the tools' conformance suite (@rho/tools-fs/testing) on it.
  'packages/backend-sandbox': { allow: ['core', 'permissions'], tests: ['tools-fs'] },
  'packages/agent': {
    allow: ['core', 'permissions', 'tools-fs', 'tools-db', 'tools-mcp', 'backend-sandbox', 'backend-daytona'],
  },
  // The queued runner submits questions to the task queue and follows their tasks (issue 34).
  'packages/eval': { allow: ['core', 'permissions', 'tools-fs', 'tools-db', 'agent', 'queue'] },
  // The fleet's sessions are a monitor SessionSource (issue 34).
  'packages/fleet': { allow: ['core', 'monitor'] },
  // An ExecutionBackend on Daytona; its tests run the file and shell tools' conformance suite on it.
  'packages/backend-daytona': { allow: ['core'], tests: ['tools-fs', 'permissions'] },
  // Hooks of a session (issue 35): core's tool hooks and trace records, nothing else.
  'packages/hooks': { allow: ['core'] },
  // Isolated workspaces, their review and checkpoints (issue 37): git as a child process, core's errors.
  'packages/workspace': { allow: ['core'] },
  // The task queue runs a task isolated when its profile may write (issue 37): it loads the
  // profile, reads the session's workspace for the result, and sweeps what dead attempts left.
  'packages/queue': { allow: ['core', 'permissions', 'workspace'] },
};

// Test code; `src/testing/` is not in it: that is a shipped entry (`@rho/core/testing`).
const testFiles = ['**/*.test.ts', '**/test/**', '**/test-support/**'];

/** The private shared-config packages in tooling/: any package may use them (in its config files). */
const tooling = ['tsconfig', 'vitest-config', 'eslint-config', 'prettier-config'];

/** Any `@rho/*` import except the listed packages, their subpath entries (`@rho/core/testing`) and tooling. */
function rhoExcept(allowed) {
  // `@rho/cli` has its own pattern (below), with its own message; it is left out here to be reported once.
  return `^@rho/(?!(?:${[...allowed, ...tooling, 'cli'].join('|')})(?:/|$))`;
}

/** The patterns every file gets: no deep import into a package, no relative path into another's build or source. */
const everywhere = [
  {
    regex: '^@rho/[^/]+/(?:src|dist)(?:/|$)',
    message: "Import the package's public entry (its `exports`), not its src/ or dist/ files.",
  },
  {
    regex: '^(?:\\.\\./)+(?:(?:packages|apps|examples|tooling|integrations)/)?\\w[\\w.-]*/(?:src|dist)/',
    message: 'Import another package by its name (`@rho/...`), never by a relative path into its src/ or dist/.',
  },
  {
    regex: '^@rho/cli(?:/|$)',
    message: '@rho/cli is the application at the top: nothing imports it.',
  },
];

/** An `internal` entry, allowed only in packages/*, apps/*, bench/ and test/ (see its config below). */
const internalEntry = {
  regex: '^@rho/[^/]+/internal(?:/|$)',
  message:
    "Public entries only here: an `internal` entry (`@rho/<name>/internal`) carries no semver promise and is for rho's own packages, apps, bench and tests.",
};

function layering(allowed, name) {
  const listed = allowed.length === 0 ? 'no @rho package' : allowed.map((dep) => `@rho/${dep}`).join(', ');
  return [
    'error',
    {
      patterns: [
        ...everywhere,
        { regex: rhoExcept(allowed), message: `${name} may import ${listed} (layering: contributing/decisions.md).` },
      ],
    },
  ];
}

/**
 * A package's surface is the list its `index.ts` writes out (STYLE.md): `export * from` would make
 * every export of a file public without anyone choosing it. In the same rule as the next one, since
 * a later config replaces a rule's options rather than adding to them.
 */
const noExportAll = {
  selector: 'ExportAllDeclaration',
  message: 'Name what a module exports (`export { a, b } from`, `export type { T } from`): no `export *` in a package.',
};

/** The same layering for `import('@rho/...')`, which `no-restricted-imports` does not look at. */
function dynamicLayering(allowed, name) {
  const listed = allowed.length === 0 ? 'no @rho package' : allowed.map((dep) => `@rho/${dep}`).join(', ');
  // esquery ends a regex at the first `/`, so the pattern spells it `\x2F`.
  const pattern = rhoExcept(allowed).replaceAll('/', '\\x2F');
  return [
    'error',
    {
      selector: `ImportExpression[source.value=/${pattern}/]`,
      message: `${name} may import ${listed} (layering: contributing/decisions.md).`,
    },
    noExportAll,
  ];
}

function layeringConfigs() {
  const configs = [
    {
      name: 'rho/layering/default',
      files: ['packages/*/**'],
      rules: {
        'no-restricted-imports': layering(['core'], 'A package not in the layering table'),
        'no-restricted-syntax': dynamicLayering(['core'], 'A package not in the layering table'),
      },
    },
    {
      name: 'rho/layering/outside-packages',
      files: ['apps/**', 'examples/**', 'integrations/**', 'bench/**', 'scripts/**', 'tooling/**', 'test/**'],
      rules: { 'no-restricted-imports': ['error', { patterns: everywhere }] },
    },
    {
      // An `internal` entry (`@rho/core/internal`) has no semver promise: rho's own packages, the
      // CLI, bench and the workspace tests may use it (they move with it). Examples are third-party
      // shaped (they show what a user can write), and integrations, scripts and tooling stand
      // outside the packages as a user's code does: public entries only.
      name: 'rho/layering/public-entries-only',
      files: ['examples/**', 'integrations/**', 'scripts/**', 'tooling/**'],
      rules: {
        'no-restricted-imports': ['error', { patterns: [...everywhere, internalEntry] }],
        'no-restricted-syntax': [
          'error',
          {
            selector: `ImportExpression[source.value=/${internalEntry.regex.replaceAll('/', '\\x2F')}/]`,
            message: internalEntry.message,
          },
        ],
      },
    },
  ];
  for (const [dir, { allow, tests = [] }] of Object.entries(layers)) {
    const name = `@rho/${dir.split('/')[1]}`;
    configs.push({
      name: `rho/layering/${dir}`,
      files: [`${dir}/**`],
      rules: { 'no-restricted-imports': layering(allow, name), 'no-restricted-syntax': dynamicLayering(allow, name) },
    });
    if (tests.length > 0) {
      configs.push({
        name: `rho/layering/${dir}/tests`,
        files: testFiles.map((glob) => `${dir}/${glob}`),
        rules: {
          'no-restricted-imports': layering([...allow, ...tests], `${name}'s tests`),
          'no-restricted-syntax': dynamicLayering([...allow, ...tests], `${name}'s tests`),
        },
      });
    }
  }
  return configs;
}

/** The whole config (a flat config array): a root `eslint.config.js` exports it as its default. */
export const rhoConfig = defineConfig(
  {
    name: 'rho/ignores',
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/.turbo/**',
      '**/coverage/**',
      'bench/.work/**',
      '.node24/**',
      // The bundled CLI (apps/cli/scripts/bundle.mjs) and the tarballs of `pnpm pack:all`.
      'apps/cli/bundle/**',
      'apps/cli/.bundle-*/**',
      'apps/cli/bundle.old-*/**',
      'packs/**',
    ],
  },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    name: 'rho/base',
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { ...globals.node } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { 'import-x': importX },
    settings: {
      // Sources import each other as `./x.js` (NodeNext); the resolver maps that to `x.ts`.
      'import-x/resolver-next': [
        createNodeResolver({
          extensionAlias: { '.js': ['.ts', '.js'] },
          conditionNames: ['import', 'node', 'default'],
        }),
      ],
      'import-x/extensions': ['.ts', '.js', '.mjs'],
      // Built output and installed packages are not followed: a cycle can only run through sources,
      // and one between packages is already an upward import the layering refuses.
      'import-x/ignore': ['[\\\\/]dist[\\\\/]', 'node_modules'],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-relative-packages': 'error',
      // The code leaves arguments and caught errors unused on purpose often enough to mark them `_`.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' },
      ],
    },
  },
  layeringConfigs(),
  {
    // Outside the workspace packages every cross-package path goes into a build (`../packages/x/dist`),
    // which the `no-restricted-imports` pattern refuses whether or not it is built; this rule would
    // only see it once `dist/` exists, so the result of `pnpm lint` would depend on the build.
    name: 'rho/outside-packages-by-pattern',
    files: ['bench/**', 'scripts/**'],
    rules: { 'import-x/no-relative-packages': 'off' },
  },
  {
    // Packages' own scripts (packages/*/scripts, run by hand) may print; their code may not.
    name: 'rho/library-code-never-prints',
    files: ['packages/*/src/**', 'packages/*/test/**'],
    rules: { 'no-console': 'error' },
  },
  {
    // Issue 16: no source file of core over about 400 lines; tests are exempt.
    name: 'rho/core-file-size',
    files: ['packages/core/src/**/*.ts'],
    ignores: testFiles,
    rules: { 'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }] },
  },
);
