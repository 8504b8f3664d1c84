import { parseTaskFile, parseTaskSpec } from '@rho/queue';
import type { TaskQueue, TaskRecord, TaskSpec } from '@rho/queue';

/** What to submit: prompts (one task each) and/or the lines of a tasks file, with shared settings. */
export interface Submission {
  /** One task per prompt. */
  prompts: readonly string[];
  /** A tasks file's text: one JSON task a line (`{"prompt": "...", "labels": ["gpu"]}`). */
  file?: { text: string; name: string };
  /** Labels added to every task: a worker started with labels takes only tasks that carry them. */
  labels?: readonly string[];
  /** Priority of the prompts' tasks (higher first). */
  priority?: number;
}

/** The tasks of a submission, each checked as `rho submit` checks it (a `ConfigError` names the bad field). */
export function tasksOf(submission: Submission): TaskSpec[] {
  const shared = {
    ...(submission.labels === undefined || submission.labels.length === 0 ? {} : { labels: [...submission.labels] }),
  };
  const tasks = submission.prompts.map((prompt, index) =>
    parseTaskSpec(
      { prompt, ...shared, ...(submission.priority === undefined ? {} : { priority: submission.priority }) },
      `prompt ${index + 1}`,
    ),
  );
  if (submission.file !== undefined)
    for (const [index, task] of parseTaskFile(submission.file.text, submission.file.name).entries())
      tasks.push(
        parseTaskSpec(
          { ...task, labels: [...(submission.labels ?? []), ...(task.labels ?? [])] },
          `${submission.file.name}:${index + 1}`,
        ),
      );
  return tasks;
}

/** States after which a task does not change any more. */
const FINAL = new Set(['done', 'failed', 'cancelled', 'expired']);

/**
 * Waits until every task is final (done, failed, cancelled, expired), looking them up by id every
 * `pollMs`, and returns them in the order of `ids`. Tells `onFinal` of each as it ends.
 */
export async function waitForTasks(
  queue: TaskQueue,
  ids: readonly string[],
  options: { pollMs?: number; timeoutMs?: number; onFinal?: (task: TaskRecord) => void } = {},
): Promise<TaskRecord[]> {
  const deadline = Date.now() + (options.timeoutMs ?? 3_600_000);
  const final = new Map<string, TaskRecord>();
  while (final.size < ids.length) {
    const pending = ids.filter((id) => !final.has(id));
    for (const task of await queue.list({ ids: pending }))
      if (FINAL.has(task.state) && !final.has(task.id)) {
        final.set(task.id, task);
        options.onFinal?.(task);
      }
    if (final.size === ids.length) break;
    if (Date.now() > deadline) throw new Error(`${ids.length - final.size} tasks did not finish in time`);
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1_000));
  }
  return ids.map((id) => final.get(id)!);
}

/** One line for a finished task: its id, state, where it ran and its answer (or what went wrong). */
export function resultLine(task: TaskRecord): string {
  const result = task.result;
  const what = result?.error ?? result?.answer ?? '';
  return [task.id, task.state, result?.host ?? task.host ?? '-', what.replace(/\s+/g, ' ')].join('\t');
}
