import { statSync } from 'node:fs';
import { join } from 'node:path';
import { readSessionMeta } from '@rho/core/internal';
import type { RawTraceRecord } from '@rho/core';
import { followTrace } from './follow-trace.js';
import type { LivenessOptions } from './live-status.js';
import { ACTIVE_STATUSES, judgeLiveness } from './live-status.js';

/** Options of {@link watchSession}. */
export interface WatchSessionOptions {
  /** Replay the trace from its beginning (default) or show only what happens from now on. */
  fromStart?: boolean;
  /** Keep following after the run ends (a later `rho --resume` appends to the same trace). */
  follow?: boolean;
  /** Ends the watch when aborted (Ctrl+C in the CLI): only the watch, never the agent. */
  signal?: AbortSignal;
  /** Poll interval of the trace (default 200 ms). */
  pollIntervalMs?: number;
  /** Liveness thresholds, to stop watching a session whose process died. */
  liveness?: LivenessOptions;
}

/**
 * The records of a session's trace as they are written. Unless `follow` is set, it ends once
 * everything has been read and the session is no longer active: its meta.json status is final
 * (completed, error, cancelled, limit) or its process is gone (dead). A session without
 * meta.json (the Python original's) ends at its last `run_end`.
 */
export function watchSession(
  directory: string,
  options: WatchSessionOptions = {},
): AsyncGenerator<RawTraceRecord, void, undefined> {
  let lastType: string | undefined;
  const records = followTrace(join(directory, 'trace.jsonl'), {
    fromStart: options.fromStart ?? true,
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
    onIdle: () => {
      if (options.follow === true) return false;
      const meta = readSessionMeta(directory);
      // Sessions without meta.json (the Python original's CLI runs): only the trace says when a run ended.
      if (meta === undefined) return lastType === 'run_end';
      const { status } = judgeLiveness(
        meta,
        () => statOrUndefined(join(directory, 'trace.jsonl')),
        options.liveness ?? {},
      );
      return status === 'dead' || (!ACTIVE_STATUSES.has(status) && status !== 'created');
    },
  });
  return (async function* () {
    for await (const record of records) {
      lastType = record.type;
      yield record;
    }
  })();
}

function statOrUndefined(path: string): number | undefined {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return undefined;
  }
}
