import type { TaskRecord } from '@rho/queue';

/**
 * What the isolated sessions of these tasks changed, one line a task, for `rho tasks` and
 * `rho results`: `ID: 3 files changed, +12/-4 on rho/<session> (host H): rho diff <session>`
 * (the workspace is on that host, under the worker's `$RHO_HOME`: review it there).
 */
export async function taskChangeLines(tasks: readonly TaskRecord[]): Promise<string[]> {
  const shown = tasks.filter((task) => task.result?.workspace?.mode === 'isolated' && task.result.session_id);
  if (shown.length === 0) return [];
  const { formatChangeStats } = await import('@rho/workspace');
  return shown.map((task) => {
    const result = task.result!;
    const workspace = result.workspace as Extract<NonNullable<typeof result.workspace>, { mode: 'isolated' }>;
    const session = result.session_id!;
    const where = workspace.branch ?? 'a copy';
    const host = result.host ?? task.host ?? '?';
    const next = workspace.changes.files === 0 ? `rho discard ${session}` : `rho diff ${session}`;
    return `${task.id.slice(0, 8)}: ${formatChangeStats(workspace.changes)} on ${where} (host ${host}): ${next}\n`;
  });
}
