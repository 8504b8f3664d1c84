import { join } from 'node:path';
import { rhoHome, SessionStore } from '@rho/core';
import { rhoAgentSessionStore } from '@rho/core/internal';
import { EXIT } from '../exit-codes.js';
import type { Terminal } from '../terminal.js';

/**
 * `rho --list`: the newest saved sessions, in the same table and words as `rho ps` (which it is,
 * limited to 20); then, marked as such, those the Python rho-agent left in
 * `~/.config/rho-agent/sessions` (they resume and export like rho's). With `--json`, the session
 * infos of `SessionStore.list`, each with its `source`.
 */
export async function listSessionsCommand(
  options: { json: boolean; limit?: number },
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const directory = join(rhoHome(env), 'sessions');
  const store = new SessionStore(directory);
  const legacyStore = rhoAgentSessionStore(store);
  const limit = options.limit ?? 20;
  if (options.json) {
    const sessions = store.list({ limit });
    const legacy = legacyStore?.list({ limit }) ?? [];
    const entries = [
      ...sessions.map((info) => ({ info, source: 'rho' })),
      ...legacy.map((info) => ({ info, source: 'rho-agent' })),
    ];
    terminal.stdout.write(
      `${JSON.stringify(
        entries.map(({ info: { meta: _meta, ...info }, source }) => ({ ...info, source })),
        null,
        2,
      )}\n`,
    );
    return EXIT.completed;
  }
  const [{ psAction }, { monitorIo }, { createDirectorySource }] = await Promise.all([
    import('./monitor/monitor-actions.js'),
    import('./monitor/monitor-io.js'),
    import('@rho/monitor'),
  ]);
  return psAction(
    createDirectorySource(directory),
    {
      json: false,
      limit,
      ...(legacyStore === undefined ? {} : { rhoAgent: createDirectorySource(legacyStore.baseDir) }),
    },
    monitorIo(terminal, env),
  );
}
