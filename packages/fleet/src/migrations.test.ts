// The migrations' SQL spells out the statuses of a session at work (a migration's text is frozen,
// so it cannot be built from the list): every such spelling, and the listing's live status, must
// be LIVE_STATUSES, which core's ACTIVE_SESSION_STATUSES makes. A change of core's list fails here
// and asks for a new migration.
import { ACTIVE_SESSION_STATUSES } from '@rho/core';
import { describe, expect, it } from 'vitest';
import { LATEST_SCHEMA_VERSION, LIVE_STATUS_SQL, LIVE_STATUSES, MIGRATIONS } from './migrations.js';

const spelled = `r.status in (${LIVE_STATUSES.map((status) => `'${status}'`).join(', ')})`;

describe('the fleet migrations', () => {
  it('are numbered 1, 2, ... without a gap, the last one the latest version', () => {
    expect(MIGRATIONS.map((migration) => migration.version)).toEqual(MIGRATIONS.map((_, index) => index + 1));
    expect(LATEST_SCHEMA_VERSION).toBe(MIGRATIONS.length);
  });

  it("spell the statuses of a session at work as LIVE_STATUSES: 'created' and core's active ones", () => {
    expect(LIVE_STATUSES).toEqual(['created', ...ACTIVE_SESSION_STATUSES]);
    expect(LIVE_STATUS_SQL).toContain(spelled);
    const lists = MIGRATIONS.flatMap((migration) => migration.statements).flatMap(
      (statement) => statement.match(/(?:status|v_live) (?:not )?in \('[^)]*\)/g) ?? [],
    );
    expect(lists.length).toBeGreaterThan(0);
    for (const list of lists) expect(list.replace(/^.*? (?:not )?in /, '')).toBe(spelled.replace(/^.*? in /, ''));
  });

  it("make the live status of the latest version's view the listing's: parked for a waiting session whose agent is gone", () => {
    const latest = MIGRATIONS.at(-1)!;
    expect(latest.statements.join('\n')).toContain(LIVE_STATUS_SQL);
    expect(LIVE_STATUS_SQL).toMatch(/when r\.status = 'waiting_approval' then 'parked' else 'dead'/);
  });
});
