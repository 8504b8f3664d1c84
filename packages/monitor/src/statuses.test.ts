// One list of statuses: core's SESSION_STATUSES (what a session records) and the monitor's
// LISTING_ONLY_STATUSES (what only a listing shows) make LISTED_STATUSES, and the Statuses table
// of docs/user-guide.md lists exactly those, so the documentation cannot drift from the code.
import { readFileSync } from 'node:fs';
import { ACTIVE_SESSION_STATUSES, RUN_STATUSES, SESSION_STATUSES } from '@rho/core';
import { describe, expect, it } from 'vitest';
import { ACTIVE_STATUSES, LISTED_STATUSES, LISTING_ONLY_STATUSES } from './live-status.js';

/** The statuses in the first column of the table under `#### Statuses` of the user guide. */
function documentedStatuses(): string[] {
  const guide = readFileSync(new URL('../../../docs/user-guide.md', import.meta.url), 'utf8');
  const section = guide.split(/^#### Statuses$/m)[1];
  if (section === undefined) throw new Error('docs/user-guide.md has no "#### Statuses" section');
  const table = section.split(/^#/m)[0]!;
  return [...table.matchAll(/^\| `([a-z_]+)` +\|/gm)].map((match) => match[1]!);
}

describe('the statuses', () => {
  it("are core's session statuses and the listing's own, once each", () => {
    expect(LISTED_STATUSES).toEqual([...SESSION_STATUSES, ...LISTING_ONLY_STATUSES]);
    expect(new Set(LISTED_STATUSES).size).toBe(LISTED_STATUSES.length);
    for (const status of RUN_STATUSES) expect(SESSION_STATUSES).toContain(status);
    expect([...ACTIVE_STATUSES]).toEqual([...ACTIVE_SESSION_STATUSES]);
  });

  it('are the rows of the Statuses table of docs/user-guide.md', () => {
    const documented = documentedStatuses();
    expect(new Set(documented).size, 'a status is documented twice').toBe(documented.length);
    expect([...documented].sort()).toEqual([...LISTED_STATUSES].sort());
  });
});
