/**
 * The statuses of a session an agent is at work on (its controls are offered). The page is a
 * browser bundle and cannot import `@rho/core`: this copy of core's `ACTIVE_SESSION_STATUSES` is
 * held to it by src/web-statuses.test.ts.
 */
export const ACTIVE_STATUSES: ReadonlySet<string> = new Set(['running', 'paused', 'waiting_approval']);
