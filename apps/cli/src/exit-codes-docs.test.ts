// The exit codes are documented once (docs/user-guide.md): the Exit codes table lists exactly the
// codes of EXIT, and the exit code column of the Statuses table is what rho exits with for each
// run status, so neither the documentation nor the code can drift.
import { readFileSync } from 'node:fs';
import { RUN_STATUSES } from '@rho/core';
import { describe, expect, it } from 'vitest';
import { EXIT, EXIT_CODE_HELP } from './exit-code-map.js';
import { exitCodeForStatus } from './exit-codes.js';

const guide = readFileSync(new URL('../../../docs/user-guide.md', import.meta.url), 'utf8');

function section(heading: RegExp): string {
  const after = guide.split(heading)[1];
  if (after === undefined) throw new Error(`docs/user-guide.md has no ${heading.source} section`);
  return after.split(/^#/m)[0]!;
}

describe('the documented exit codes', () => {
  it('are the codes of EXIT, each once, and the codes rho --help lists', () => {
    const documented = [...section(/^### Exit codes$/m).matchAll(/^\| (\d+) +\|/gm)].map((match) => Number(match[1]));
    expect(new Set(documented).size, 'a code is documented twice').toBe(documented.length);
    const codes = [...new Set(Object.values(EXIT))].sort((a, b) => a - b);
    expect([...documented].sort((a, b) => a - b)).toEqual(codes);
    expect(EXIT_CODE_HELP.map(([code]) => code).sort((a, b) => a - b)).toEqual(codes);
  });

  it("are what a run ends with for each status, as the Statuses table's column says", () => {
    const rows = new Map(
      [...section(/^#### Statuses$/m).matchAll(/^\| `([a-z_]+)` +\|[^|]*\| *(\d*) *\|$/gm)].map((match) => [
        match[1]!,
        match[2]!,
      ]),
    );
    for (const status of RUN_STATUSES) {
      expect(rows.has(status), `${status} is in the Statuses table`).toBe(true);
      expect(rows.get(status), `the exit code of a run that ends ${status}`).toBe(String(exitCodeForStatus(status)));
    }
  });
});
