import type { ChatMessage, ContextWindowSource } from '@rho/model-client';

/** Share of the context window past which a session compacts automatically. */
export const AUTO_COMPACT_THRESHOLD = 0.7;

/** Latest user messages kept verbatim besides the original task. */
export const KEPT_RECENT_USER_MESSAGES = 3;

/** Opens the summary message that replaces compacted history (the original's wording). */
export const SUMMARY_PREFIX =
  'Another language model worked on this task and produced a summary of its progress. Use this to build on the work that has already been done and avoid duplicating effort. Here is the summary:';

/** The instruction sent to the model to produce a summary. */
export const COMPACTION_PROMPT = `CONTEXT CHECKPOINT COMPACTION

The conversation so far is about to be replaced by a summary, so that work can continue in a fresh context. Write a handoff summary for another language model that will continue this task. Include:
- Progress so far and the decisions made, with their reasons.
- Important context, constraints and user preferences.
- What remains to be done: the concrete next steps.
- Critical data: file paths, identifiers, commands, values, references, errors seen.

Be concise and structured. Do not call tools; answer with the summary only.`;

/** Compaction settings. */
export interface CompactionOptions {
  /** Compact automatically when the context passes `threshold` of the window. Default true. */
  auto?: boolean;
  /**
   * The model's context window in tokens, set by the user: wins over everything else. Without it
   * the window is, by precedence, `contextWindows[model]`, what the server reports (discovered
   * once per base URL and model, bounded by a short timeout), the table of known models, and
   * `DEFAULT_CONTEXT_WINDOW` (32,768), so automatic compaction runs for every model.
   */
  contextWindow?: number;
  /** Where `contextWindow` was set, for `/status` and the trace's `llm_start`. Default `config`. */
  contextWindowSource?: Extract<ContextWindowSource, 'flag' | 'env' | 'config'>;
  /** Windows per model name (`{ 'qwen3-coder': 131072 }`), used when `contextWindow` is not set. */
  contextWindows?: Readonly<Record<string, number>>;
  /** Ask the server for the window (default true); false goes straight to the table and default. */
  discover?: boolean;
  /** Share of the window that triggers automatic compaction. Default 0.7. */
  threshold?: number;
}

/** The outcome of a compaction. */
export type CompactResult =
  | { ok: true; summary: string; tokensBefore: number; tokensAfter: number; trigger: 'auto' | 'manual' }
  | { ok: false; error: string; trigger: 'auto' | 'manual' };

/** The messages kept verbatim: the original task and the latest user messages (not old summaries). */
export function messagesToKeep(messages: readonly ChatMessage[]): ChatMessage[] {
  const users = messages.filter(
    (message): message is Extract<ChatMessage, { role: 'user' }> =>
      message.role === 'user' && message.content !== '' && !message.content.startsWith(SUMMARY_PREFIX),
  );
  const original = users[0];
  if (original === undefined) return [];
  const recent = users.slice(1).slice(-KEPT_RECENT_USER_MESSAGES);
  return [original, ...recent].map((message) => ({ role: 'user', content: message.content }));
}
