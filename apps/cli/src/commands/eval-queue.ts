// `rho eval sql --queue`'s two ends in the CLI: the queue it submits to, and the hidden `rho eval
// sql-task` a worker runs for each question. What a question's task holds, how the submitter
// follows it and how the worker runs and reports it are @rho/eval's (createQueuedSqlRunner,
// sqlTaskSession, sqlTaskReport); here are the flags, the environment, signals and printing.
import { join } from 'node:path';
import type { TaskQueue } from '@rho/queue';
import type { Terminal } from '../terminal.js';
import type { QueueConnectionArguments } from './queue-commands.js';

/** Arguments of the hidden `rho eval sql-task`. */
export interface SqlTaskArguments {
  task: string;
}

/**
 * `rho eval sql-task --task JSON` (hidden; what `rho worker` runs for a `sql_eval` task): runs the
 * question's session as `rho eval sql` does, on this machine, and prints JSON lines the worker
 * reads: `run_start` (the session id), the final `message`, `task_output` (the outcome, for the
 * submitter to grade) and `run_end`. Exit code as a run's: 0 completed, 1 failed, 3 limit, 130
 * cancelled (SIGTERM or SIGINT cancel the session).
 */
export async function sqlTaskCommand(
  argv: SqlTaskArguments,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const { parseTaskSpec } = await import('@rho/queue');
  const evaluation = await import('@rho/eval');
  const { rhoHome } = await import('@rho/core');
  const { UsageError } = await import('../exit-codes.js');
  const { loadDotenv } = await import('../dotenv.js');
  let raw: unknown;
  try {
    raw = JSON.parse(argv.task);
  } catch (error) {
    throw new UsageError({ message: `--task must be a task as JSON: ${(error as Error).message}` });
  }
  const spec = parseTaskSpec(raw, 'rho eval sql-task --task');
  if (spec.sql_eval === undefined)
    throw new UsageError({ message: '--task has no sql_eval: it is not an eval question.' });
  loadDotenv(env);
  // This worker's own model settings; `rho worker` passes the endpoints it allows a task to name.
  let allowedEndpoints: string[] = [];
  try {
    const parsed: unknown = JSON.parse(env.RHO_WORKER_ALLOW_ENDPOINTS ?? '[]');
    if (Array.isArray(parsed)) allowedEndpoints = parsed.filter((item): item is string => typeof item === 'string');
  } catch {
    // Unreadable: no endpoint is allowed.
  }
  // The worker's own model settings, resolved as a run resolves them; the task's choices apply over them.
  const { modelSettingsSection, resolveSettings } = await import('@rho/core/settings');
  const { queueSettingsSection } = await import('@rho/queue/settings');
  const { settings } = await resolveSettings({
    sections: [modelSettingsSection, queueSettingsSection],
    home: rhoHome(env),
    env,
    overrides: {},
  });
  const { apiKey: _placeholder, ...own } = settings.model.clientOptions;
  const question = evaluation.sqlTaskSession(spec, {
    clientOptions: { ...own, ...(settings.model.apiKey === undefined ? {} : { apiKey: settings.model.apiKey }) },
    defaultModel: settings.model.model,
    allowedEndpoints,
  });
  const home = rhoHome(env);
  const id = env.RHO_TASK_ID;
  const attempt = Number(env.RHO_TASK_ATTEMPT ?? '1');
  const queued =
    id === undefined || id === '' ? undefined : { id, attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : 1 };

  // The session registers with the worker's fleet, as any task's session does.
  const { fleetSources } = await import('../fleet/fleet-source.js');
  const sources = fleetSources({ env, home });
  const { startFleetLink } = await import('../fleet/run-fleet.js');
  const warn = (message: string) => terminal.stderr.write(`rho: ${message}\n`);
  const link =
    sources === undefined
      ? undefined
      : await startFleetLink(
          sources,
          { userConfig: sources.userConfig as Record<string, unknown> | undefined },
          // The task's labels (RHO_TASK_LABELS, set by rho worker).
          settings.queue.labels,
          { onWarning: warn },
        );

  const write = (record: Record<string, unknown>) => terminal.stdout.write(`${JSON.stringify(record)}\n`);
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  let outcome: import('@rho/eval').SqlSessionOutcome | undefined;
  try {
    outcome = await evaluation.runSqlQuestionSession({
      ...question,
      redactor: await (await import('../known-secrets.js')).processSecretsRedactor(env, home),
      sessionsDir: join(home, 'sessions'),
      signal: controller.signal,
      ...(queued === undefined ? {} : { task: queued }),
      ...(link === undefined
        ? {}
        : {
            sessionOptions: (session: { id: string; directory: string; workingDir: string }) =>
              link.sessionOptions(
                {
                  id: session.id,
                  model: question.model,
                  profile: 'readonly',
                  cwd: session.workingDir,
                  firstPrompt: spec.prompt,
                },
                session.directory,
              ),
          }),
      onSession: (sessionId) => write({ type: 'run_start', session_id: sessionId }),
    });
  } finally {
    process.off('SIGTERM', stop);
    process.off('SIGINT', stop);
    await link?.close();
  }
  const report = evaluation.sqlTaskReport(outcome);
  for (const record of report.records) write(record);
  return report.exitCode;
}

/** Opens the queue of `rho eval sql --queue` (the fleet's database, as `rho submit` finds it). */
export async function openEvalQueue(argv: QueueConnectionArguments, env: NodeJS.ProcessEnv): Promise<TaskQueue> {
  const { openQueue } = await import('./queue-actions.js');
  return openQueue(argv, env);
}
