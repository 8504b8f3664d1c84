import { basename, join } from 'node:path';
import { TraceError } from '../errors.js';
import { readSessionMeta } from '../session-meta.js';
import { readTraceFile } from '../trace-file.js';
import { sessionSettingsDocument } from '../settings/saved-settings.js';
import type { TraceContents } from '../trace-reader.js';
import type { AtifTrajectory } from './atif-schema.js';
import type { TraceToAtifOptions } from './trace-to-atif.js';
import { traceToAtif } from './trace-to-atif.js';

/**
 * Exports a session directory (rho's or the Python rho-agent's) as an ATIF-v1.6 trajectory. The
 * session id defaults to the directory's name or `meta.json`'s id, the model to `meta.json`'s
 * (else `config.yaml`'s), and the system prompt and reasoning effort to `config.yaml`'s when it
 * records them. Explicit options win.
 */
export function sessionToAtif(directory: string, options: TraceToAtifOptions = {}): AtifTrajectory {
  const tracePath = join(directory, 'trace.jsonl');
  let trace: TraceContents;
  try {
    // Read in chunks: a line over 64 MiB (written before traces had a record limit) is noted, not held.
    trace = readTraceFile(tracePath);
  } catch (error) {
    throw new TraceError({
      message: `No readable trace.jsonl in ${directory}: ${(error as Error).message}. Only sessions that ran a task can be exported.`,
      cause: error,
    });
  }
  const meta = readSessionMeta(directory) ?? {};
  // config.yaml is optional for export: the trace is the source of truth.
  const config = sessionSettingsDocument(directory);
  const model = options.model ?? nonEmpty(meta.model) ?? nonEmpty(config.model);
  const systemPrompt = options.systemPrompt ?? nonEmpty(config.system_prompt);
  const reasoningEffort = options.reasoningEffort ?? nonEmpty(config.reasoning_effort);
  return traceToAtif(trace, {
    ...options,
    sessionId: options.sessionId ?? nonEmpty(meta.id) ?? basename(directory),
    ...(model === undefined ? {} : { model }),
    ...(systemPrompt === undefined ? {} : { systemPrompt }),
    ...(reasoningEffort === undefined ? {} : { reasoningEffort }),
  });
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}
