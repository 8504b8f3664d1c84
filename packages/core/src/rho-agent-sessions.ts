import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { SessionNotFoundError } from './errors.js';
import { SessionStore } from './session-store.js';

/**
 * Where the Python rho-agent's CLI kept its sessions: `~/.config/rho-agent/sessions`. rho reads
 * them (they replay, resume, list and export unchanged) as a second, marked source of sessions.
 */
export function rhoAgentSessionsDir(home: string = homedir()): string {
  return join(home, '.config', 'rho-agent', 'sessions');
}

/** A session directory found for a reference, and whether it is one of rho-agent's. */
export interface FoundSession {
  /** The session directory. */
  directory: string;
  /** True when it was found in rho-agent's sessions directory, not rho's. */
  fromRhoAgent: boolean;
}

/**
 * The store of rho-agent's sessions, when that directory exists and is not `store`'s own (a
 * `$RHO_HOME` pointed at it already reads them).
 */
export function rhoAgentSessionStore(
  store: SessionStore,
  directory: string = rhoAgentSessionsDir(),
): SessionStore | undefined {
  const base = resolve(directory);
  if (base === store.baseDir || !existsSync(base)) return undefined;
  return new SessionStore(base);
}

/**
 * Resolves a session reference in `store` and, when it finds nothing there, in rho-agent's
 * sessions: an id or unique prefix that only rho-agent has, or `latest` when rho has no session
 * yet. rho's own sessions always win; an ambiguous prefix in rho's is still an error.
 *
 * @throws SessionNotFoundError naming both places when neither has the session.
 */
export function resolveSessionWithRhoAgent(
  store: SessionStore,
  reference: string,
  rhoAgentDir: string = rhoAgentSessionsDir(),
): FoundSession {
  try {
    return { directory: store.resolve(reference), fromRhoAgent: false };
  } catch (error) {
    // An ambiguous prefix has candidates: that is an answer about rho's sessions, not a miss.
    if (!SessionNotFoundError.isInstance(error) || error.candidates.length > 0) throw error;
    const legacy = rhoAgentSessionStore(store, rhoAgentDir);
    if (legacy === undefined) throw error;
    try {
      return { directory: legacy.resolve(reference), fromRhoAgent: true };
    } catch (legacyError) {
      if (!SessionNotFoundError.isInstance(legacyError) || legacyError.candidates.length > 0) throw legacyError;
      throw new SessionNotFoundError({
        message: `${error.message} (rho-agent's sessions in ${legacy.baseDir} were searched too.)`,
        cause: error,
      });
    }
  }
}
