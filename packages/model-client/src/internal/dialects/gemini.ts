// Gemini's OpenAI-compatible endpoint.
//
// - A tool call may first arrive with `{}` as its arguments, then again (same index, same id)
//   with the full arguments as one piece (microsoft/autogen PR #7549): the full arguments replace
//   the placeholder instead of being appended to it.
// - Tool calls of thinking models carry `extra_content: {google: {thought_signature}}`, which
//   must be sent back with the call in the next request (Gemini 3 answers 400 without it).

/**
 * Whether an incoming argument fragment restarts the arguments instead of continuing them: the
 * arguments so far are a complete JSON object (the placeholder, or a previous full copy) and the
 * fragment opens a new one.
 */
export function restartsArguments(current: string, fragment: string): boolean {
  if (current === '' || fragment.charCodeAt(0) !== 123 /* { */) return false;
  const trimmed = current.trimEnd();
  if (trimmed.charCodeAt(trimmed.length - 1) !== 125 /* } */) return false;
  try {
    const value: unknown = JSON.parse(trimmed);
    return value !== null && typeof value === 'object';
  } catch {
    return false;
  }
}

/** The provider data of a tool-call delta that must round-trip (`extra_content`), if any. */
export function extraContentOf(delta: Record<string, unknown>): Record<string, unknown> | undefined {
  const extra = delta['extra_content'];
  return extra !== null && typeof extra === 'object' && !Array.isArray(extra)
    ? (extra as Record<string, unknown>)
    : undefined;
}
