import type { SessionSource } from '@rho/monitor';
import type { ServeAllowlist } from './allowlist.js';
import type { ChildRun, ChildRunContext } from './child-run.js';
import type { McpServeSettings } from './serve-settings.js';

/** A run this server started, and for which client connection. */
export interface ServedRun {
  readonly sessionId: string;
  readonly run: ChildRun;
  readonly connection: number;
}

/** What every connection's tools share: the allowlist, the sessions, the runs started here. */
export interface ServeContext {
  readonly allow: ServeAllowlist;
  readonly settings: McpServeSettings;
  /** `$RHO_HOME/sessions`. */
  readonly sessionsDir: string;
  /** The sessions directory as `rho ps`, `rho cancel`, `rho directive`, `rho approve` reach it. */
  readonly source: SessionSource;
  readonly child: ChildRunContext;
  /** Runs started by this server that have not ended, by session id. */
  readonly runs: Map<string, ServedRun>;
  /** Runs starting (their session id not known yet), counted against max_concurrent. */
  starting: number;
  /** The environment (for policy_check's profiles: `$RHO_HOME`). */
  readonly env: NodeJS.ProcessEnv;
}

/** Cancels a session the way `rho cancel` does (its control channel); a child with no session yet is interrupted. */
export async function cancelServedRun(context: ServeContext, sessionId: string): Promise<void> {
  try {
    await context.source.control(sessionId, 'cancel');
  } catch {
    context.runs.get(sessionId)?.run.interrupt();
  }
}

/**
 * What a client's disconnection does to the runs it started: `keep` leaves them running (they
 * are ordinary sessions: `rho ps`, `rho cancel`), `cancel` cancels those still running.
 */
export async function onDisconnect(context: ServeContext, connection: number): Promise<void> {
  if (context.settings.onDisconnect !== 'cancel') return;
  const mine = [...context.runs.values()].filter((run) => run.connection === connection && !run.run.exited);
  await Promise.all(mine.map((run) => cancelServedRun(context, run.sessionId)));
}
