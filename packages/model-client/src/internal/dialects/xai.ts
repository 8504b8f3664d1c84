// xAI: `completion_tokens` leaves out the reasoning tokens (`total_tokens` is prompt + completion
// + reasoning), where OpenAI and everyone else count them in `completion_tokens`. vercel/ai's
// `convert-xai-chat-usage.ts` adds them back. Recognised from the numbers themselves, so a relay
// in front of xAI is handled too.

/** Output tokens, reasoning included, from a usage object of any provider. */
export function outputTokensOf(
  prompt: number,
  completion: number,
  reasoning: number,
  total: number | undefined,
): number {
  if (reasoning > 0 && total !== undefined && total === prompt + completion + reasoning) {
    return completion + reasoning;
  }
  return completion;
}
