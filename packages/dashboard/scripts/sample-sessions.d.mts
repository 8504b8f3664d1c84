/** Options of {@link writeSampleSessions}. */
export interface SampleOptions {
  /** Model calls per session (default 3). */
  turns?: number;
  /** Start time of the first session, ms since the epoch. */
  start?: number;
  /** Time between two sessions' starts, ms (default 60 000). */
  spreadMs?: number;
  /** The host name recorded in meta.json (default build-01). */
  hostname?: string;
}

/** Writes `count` synthetic sessions under `base`; returns their ids. */
export function writeSampleSessions(base: string, count: number, options?: SampleOptions): string[];
