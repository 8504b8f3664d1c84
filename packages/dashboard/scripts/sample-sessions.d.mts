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

/** Options of {@link writeLargeSession}. */
export interface LargeSessionOptions {
  /** Trace records to write at least (default 100 000). */
  records?: number;
  /** The session's id (default big00000). */
  id?: string;
  /** Time of the first record, ms since the epoch. */
  start?: number;
  /** The model recorded (one of the sample models; default gpt-5-mini). */
  model?: string;
  /** Seed of the generator (default 7). */
  seed?: number;
}

/** Writes one long synthetic session under `base`; returns its id, record count, trace size in bytes and number of runs. */
export function writeLargeSession(
  base: string,
  options?: LargeSessionOptions,
): { id: string; records: number; bytes: number; runs: number };
