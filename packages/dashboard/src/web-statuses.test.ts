// The page's copy of the active statuses (it is a browser bundle: no @rho/core there) is core's list.
import { ACTIVE_SESSION_STATUSES } from '@rho/core';
import { describe, expect, it } from 'vitest';
import { ACTIVE_STATUSES } from '../web/statuses.js';

describe("the page's active statuses", () => {
  it("are core's ACTIVE_SESSION_STATUSES", () => {
    expect([...ACTIVE_STATUSES].sort()).toEqual([...ACTIVE_SESSION_STATUSES].sort());
  });
});
