import type { ContextWindowInfo, ModelClient } from '@rho/model-client';
import { resolveContextWindow } from '@rho/model-client';
import type { CompactionOptions } from './compaction.js';

/**
 * The context window of one session's model, resolved once: the agent's setting, its per-model
 * setting, the table of known models, the server's answer (bounded by a short timeout; asked only
 * for models the table does not know), the default. Kept apart from the loop so the loop only asks for it.
 */
export class ContextWindowResolver {
  private resolved: ContextWindowInfo | undefined;
  private pending: Promise<ContextWindowInfo> | undefined;

  constructor(
    private readonly options: CompactionOptions,
    private readonly client: ModelClient,
  ) {}

  /** The window and its source, once resolved. */
  get info(): ContextWindowInfo | undefined {
    return this.resolved;
  }

  /** Resolves the window (once; concurrent callers share the answer). Never throws. */
  resolve(signal?: AbortSignal): Promise<ContextWindowInfo> {
    if (this.resolved !== undefined) return Promise.resolve(this.resolved);
    this.pending ??= (async () => {
      const { contextWindow, contextWindowSource = 'config', contextWindows, discover = true } = this.options;
      const client = this.client;
      const info = await resolveContextWindow({
        model: client.model,
        ...(contextWindow === undefined ? {} : { explicit: { tokens: contextWindow, source: contextWindowSource } }),
        ...(contextWindows === undefined ? {} : { perModel: contextWindows }),
        ...(discover && client.discoverContextWindow !== undefined
          ? { discover: () => client.discoverContextWindow!(signal) }
          : {}),
      });
      // A discovery cut short by a cancelled run says nothing: the next run asks again.
      if (signal?.aborted !== true) this.resolved = info;
      return info;
    })().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** The `llm_start` fields that show the window and its source (none before it is resolved). */
  traceFields(): { context_window?: number; context_window_source?: string } {
    return this.resolved === undefined
      ? {}
      : { context_window: this.resolved.tokens, context_window_source: this.resolved.source };
  }
}
