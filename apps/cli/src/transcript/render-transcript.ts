import { readTrace } from '@rho/core';
import type { TraceContents } from '@rho/core';
import { buildTranscript } from './transcript.js';
import type { TranscriptChanges, TranscriptMeta } from './transcript.js';
import { transcriptToHtml } from './transcript-html.js';
import { transcriptToMarkdown } from './transcript-markdown.js';

/** The readable formats of `rho export`. */
export type TranscriptFormat = 'md' | 'html';

/** Options of {@link renderTranscript}. */
export interface RenderTranscriptOptions {
  sessionId: string;
  meta?: TranscriptMeta;
  changes?: TranscriptChanges;
  /** Applied to the transcript before it is rendered (secrets of this machine's configuration). */
  redact?: <T>(value: T) => T;
}

/**
 * A session's trace (the text of `trace.jsonl`, or what {@link readTrace} made of it) as a
 * readable transcript in Markdown or HTML. Returns the document; writes nothing.
 */
export function renderTranscript(
  trace: string | TraceContents,
  format: TranscriptFormat,
  options: RenderTranscriptOptions,
): string {
  const contents = typeof trace === 'string' ? readTrace(trace) : trace;
  const built = buildTranscript(contents.records, {
    sessionId: options.sessionId,
    ...(options.meta === undefined ? {} : { meta: options.meta }),
    ...(options.changes === undefined ? {} : { changes: options.changes }),
    unreadableLines: contents.skipped.length + (contents.tornLastLine ? 1 : 0),
  });
  const transcript = options.redact === undefined ? built : options.redact(built);
  return format === 'html' ? transcriptToHtml(transcript) : transcriptToMarkdown(transcript);
}
