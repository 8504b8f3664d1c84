import { join } from 'node:path';
import { rhoAgentSessionStore, rhoHome, SessionStore } from '@rho/core';
import type { SessionInfo } from '@rho/core';
import { formatAge } from '../format.js';
import type { Terminal } from '../terminal.js';
import { styles } from '../terminal.js';

/**
 * `rho --list`: saved sessions, newest first; then, marked as such, those the Python rho-agent
 * left in `~/.config/rho-agent/sessions` (they resume and export like rho's).
 */
export function listSessionsCommand(options: { json: boolean; limit?: number }, terminal: Terminal, env: NodeJS.ProcessEnv): number {
  const store = new SessionStore(join(rhoHome(env), 'sessions'));
  const sessions = store.list({ limit: options.limit ?? 20 });
  const legacyStore = rhoAgentSessionStore(store);
  const legacy = legacyStore?.list({ limit: options.limit ?? 20 }) ?? [];
  if (options.json) {
    const entries = [...sessions.map((info) => ({ info, source: 'rho' })), ...legacy.map((info) => ({ info, source: 'rho-agent' }))];
    terminal.stdout.write(`${JSON.stringify(entries.map(({ info: { meta: _meta, ...info }, source }) => ({ ...info, source })), null, 2)}\n`);
    return 0;
  }
  if (sessions.length === 0) terminal.stdout.write('No saved sessions found.\n');
  else writeTable(sessions, terminal);
  if (legacyStore !== undefined && legacy.length > 0) {
    terminal.stdout.write(`\nSessions of rho-agent (${legacyStore.baseDir}):\n`);
    writeTable(legacy, terminal);
  }
  return 0;
}

function writeTable(sessions: readonly SessionInfo[], terminal: Terminal): void {
  const style = styles(terminal.color && terminal.stdout.isTTY === true);
  const rows = sessions.map((info) => [
    info.id,
    info.status,
    info.model ?? '-',
    formatAge(info.startedAt),
    info.costUsd === undefined ? '-' : `$${info.costUsd.toFixed(4)}`,
    oneLine(info.firstPrompt ?? '', 60),
  ]);
  const header = ['ID', 'STATUS', 'MODEL', 'AGE', 'COST', 'FIRST PROMPT'];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) => cells.map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  ');
  terminal.stdout.write(`${style.bold(line(header))}\n`);
  for (const row of rows) terminal.stdout.write(`${line(row)}\n`);
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 3)}...` : flat;
}
