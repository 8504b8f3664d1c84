import type { SessionObserver } from '@rho/core';
import type { SessionSpanOptions } from './session-span-observer.js';
import { createSessionSpanObserver } from './session-span-observer.js';

/**
 * Sends `session`'s runs to OpenTelemetry as GenAI spans made with `options.tracer` (see
 * {@link createSessionSpanObserver}); child sessions its tool calls start are traced under the
 * calls. Returns a function that detaches the observer.
 *
 * ```ts
 * const session = agent.createSession();
 * instrumentSession(session, { tracer: trace.getTracer('my-app') });
 * ```
 */
export function instrumentSession(
  session: Parameters<typeof createSessionSpanObserver>[0] & { observe(observer: SessionObserver): () => void },
  options: SessionSpanOptions,
): () => void {
  return session.observe(createSessionSpanObserver(session, options));
}
