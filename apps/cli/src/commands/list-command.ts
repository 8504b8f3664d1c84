import { join } from 'node:path';
import { rhoHome, SessionStore } from '@rho/core';
import { EXIT } from '../exit-codes.js';
import type { Terminal } from '../terminal.js';

/**
 * `rho --list`: the newest saved sessions, in the same table and words as `rho ps` (which it is,
 * limited to 20); with `--json`, the session infos of `SessionStore.list`.
 */
export async function listSessionsCommand(options: { json: boolean; limit?: number }, terminal: Terminal, env: NodeJS.ProcessEnv): Promise<number> {
  const directory = join(rhoHome(env), 'sessions');
  if (options.json) {
    const sessions = new SessionStore(directory).list({ limit: options.limit ?? 20 });
    terminal.stdout.write(`${JSON.stringify(sessions.map(({ meta: _meta, ...info }) => info), null, 2)}\n`);
    return EXIT.completed;
  }
  const [{ psAction }, { monitorIo }] = await Promise.all([import('./monitor/monitor-actions.js'), import('./monitor/monitor-io.js')]);
  return psAction(directory, { json: false, limit: options.limit ?? 20 }, monitorIo(terminal, env));
}
