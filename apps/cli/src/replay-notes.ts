import type { Session } from '@rho/core';

/** What a person should know about a resumed trace: interrupted tool calls, a torn last line. */
export function replayNotes(session: Session): string[] {
  const report = session.state.replay;
  if (report === undefined) return [];
  const notes = report.interruptedToolCalls.map(
    (call) =>
      `Note: tool call ${call.name} (${call.id}) was interrupted when the agent stopped; the model is told its outcome is unknown.`,
  );
  if (report.tornLastLine) notes.push('Note: the last line of the trace was cut off by a crash and was ignored.');
  for (const record of report.invalidRecords.slice(0, 5))
    notes.push(`Note: trace line ${record.line} (a ${record.type} record) was skipped: ${record.reason}.`);
  if (report.invalidRecords.length > 5)
    notes.push(`Note: ${report.invalidRecords.length - 5} more trace records of the wrong shape were skipped.`);
  if (report.recoveredDirectives > 0)
    notes.push(
      `Note: ${report.recoveredDirectives} operator directive(s) recorded just before the agent stopped are delivered from their trace record.`,
    );
  if (report.skippedLines.length > 0)
    notes.push(
      `Note: ${report.skippedLines.length} unreadable trace line(s) were skipped (lines ${report.skippedLines.slice(0, 5).join(', ')}${report.skippedLines.length > 5 ? ', ...' : ''}).`,
    );
  return notes;
}

/**
 * The prompt to pass to `session.run`: empty when the session's last message is this very prompt,
 * still unanswered (its run failed before the model answered), so a retry does not send it twice.
 */
export function promptToSend(session: Session, prompt: string): string {
  const last = session.state.messages.at(-1);
  return last !== undefined &&
    last.role === 'user' &&
    typeof last.content === 'string' &&
    last.content.trim() === prompt.trim()
    ? ''
    : prompt;
}
