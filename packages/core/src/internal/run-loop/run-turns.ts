import type { RhoError } from '@rho/model-client';
import type { RunStatus } from '../../events.js';
import type { Budgets } from '../../session-options.js';
import { compactHistory, compactionDue } from './auto-compaction.js';
import { finalTurnAtLimit, reachedLimit } from './budgets.js';
import { modelTurn } from './model-turn.js';
import { parkedCallsOf } from './parked-calls.js';
import type { RunScope } from './run-scope.js';
import { runToolCalls } from './tool-calls.js';

/** How the turns of a run ended. */
export interface TurnsOutcome {
  status: RunStatus;
  /** The final answer so far: the text of the run's last assistant message. */
  finalText: string;
  /** For `limit`: which budget ended the run. */
  limit?: string;
  /** For `error`: what went wrong. */
  failure?: RhoError;
}

/**
 * The loop of a run: checkpoint (pause, cancel), directives, budgets, compaction, a model turn,
 * its tool calls; repeated until the model answers without tools, or the run is cancelled, parked
 * on an approval, limited or fails. Throws only what the caller reports as an internal error (and
 * a backend that stopped under the calls).
 */
export async function runTurns(scope: RunScope, budgets: Budgets, startedAt: number): Promise<TurnsOutcome> {
  const { controller, control, state, agent } = scope;
  let finalText = '';
  let turns = 0;
  for (;;) {
    if (!(await control.checkpoint(controller))) return { status: 'cancelled', finalText };
    await control.deliverDirectives();
    const reached = reachedLimit(budgets, turns, state.usage, startedAt);
    if (reached !== undefined) {
      return { status: 'limit', limit: reached, finalText: await finalTurnAtLimit(scope, reached) };
    }
    if (await compactionDue(scope, controller.signal)) {
      await compactHistory(scope, { trigger: 'auto', signal: controller.signal });
      if (controller.signal.aborted) return { status: 'cancelled', finalText };
    }
    turns += 1;
    const outcome = await modelTurn(scope, true);
    if (outcome.kind === 'cancelled') return { status: 'cancelled', finalText };
    if (outcome.kind === 'error') return { status: 'error', failure: outcome.error, finalText };
    if (outcome.text !== '') finalText = outcome.text;
    if (outcome.toolCalls.length === 0) {
      // An answer cut off at the model's output limit is not a finished answer.
      return { status: outcome.finishReason === 'length' ? 'truncated' : 'completed', finalText };
    }
    const toolOutcome = await runToolCalls(scope, outcome.toolCalls);
    // A backend that stopped under the calls (its container exited) can run nothing more.
    const stopped = agent.backend.stopped?.();
    if (stopped !== undefined) throw stopped;
    if (toolOutcome === 'cancelled') return { status: 'cancelled', finalText };
    if (toolOutcome === 'parked') {
      state.parkedToolCalls = parkedCallsOf(
        state,
        outcome.toolCalls.map((call) => call.id),
      );
      return { status: 'waiting_approval', finalText };
    }
    if (toolOutcome === 'rejected') return { status: 'completed', finalText };
  }
}
