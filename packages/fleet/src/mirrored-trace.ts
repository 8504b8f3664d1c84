import type { Fleet } from './types.js';

/** Records read per query when a whole mirrored trace is read. */
const PAGE = 1_000;

/** A session's whole mirrored trace, as the lines of a trace.jsonl (in sequence order). */
export async function mirroredTrace(fleet: Fleet, sessionId: string): Promise<string> {
  const lines: string[] = [];
  let after = 0;
  for (;;) {
    const page = await fleet.readRecords(sessionId, after, PAGE);
    for (const { record, seq } of page) {
      lines.push(JSON.stringify(record));
      after = seq;
    }
    if (page.length < PAGE) break;
  }
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
