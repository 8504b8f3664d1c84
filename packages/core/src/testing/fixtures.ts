import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The folder of session traces written by the Python original rho-agent
 * (`<package>/fixtures/python-traces`, one sub-folder per session with `trace.jsonl`,
 * `meta.json` and `config.yaml`). Tests of any package read them through this path.
 *
 * The folder ships with the package (`files` lists `fixtures`), so the path also exists in an
 * installed `@rho/core`.
 */
// This module lives in src/testing/ (tests) or dist/testing/ (built): both are two levels
// below the package root.
export const pythonTracesDir: string = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'fixtures',
  'python-traces',
);
