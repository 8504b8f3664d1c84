import { rhoHome } from '@rho/core';
import type { TaskAllowlistOptions, WorkerEvent } from '@rho/queue';
import { cliBinPath } from '../cli-files.js';
import { EXIT, UsageError } from '../exit-codes.js';
import type { Terminal } from '../terminal.js';
import { leaseFrom, oneLine, queueConnection } from './queue-actions.js';
import type { WorkerArguments } from './queue-commands.js';

/** `rho worker`: runs tasks until SIGTERM/SIGINT, then drains. */
export async function workerAction(argv: WorkerArguments, terminal: Terminal, env: NodeJS.ProcessEnv): Promise<number> {
  const { createTaskWorker, createCliSessionRunner, taskAllowlist } = await import('@rho/queue');
  const { url, schema, fromFlag } = await queueConnection(argv, env);
  if (!Number.isInteger(argv.concurrency) || argv.concurrency < 1)
    throw new UsageError({ message: `--concurrency must be a whole number of at least 1 (got ${argv.concurrency}).` });
  const allow = await workerAllowlist(argv, env);
  // Checked here too, before connecting: a directory that does not exist is a usage error.
  const checked = taskAllowlist(allow, process.cwd(), env.OPENAI_BASE_URL);
  const bin = cliBinPath();
  const log = (event: WorkerEvent | { type: string; [key: string]: unknown }) => {
    if (argv.json) terminal.stderr.write(`${JSON.stringify({ ts: new Date().toISOString(), ...event })}\n`);
    else terminal.stderr.write(`${describe(event as WorkerEvent)}\n`);
  };
  const worker = await createTaskWorker({
    url,
    ...(schema === undefined ? {} : { schema }),
    concurrency: argv.concurrency,
    // A container's host name means little: RHO_WORKER_HOST names the node in `rho tasks`.
    ...(env.RHO_WORKER_HOST === undefined || env.RHO_WORKER_HOST === '' ? {} : { hostname: env.RHO_WORKER_HOST }),
    ...(argv.labels === undefined ? {} : { labels: argv.labels }),
    ...leaseFrom(argv.lease, env),
    ...(argv.poll === undefined ? {} : { pollSeconds: argv.poll }),
    allow,
    // Where the sessions keep their workspaces: the worker reads and sweeps them there.
    home: rhoHome(env),
    ...(env.OPENAI_BASE_URL === undefined ? {} : { ownEndpoint: env.OPENAI_BASE_URL }),
    runner: createCliSessionRunner({
      command: [process.execPath, bin],
      env: {
        // Sessions register with the same fleet as the worker.
        ...(fromFlag ? { ...env, RHO_FLEET_URL: url } : env),
        // An eval task's session checks its endpoint again before it sends the worker's key.
        RHO_WORKER_ALLOW_ENDPOINTS: JSON.stringify(checked.endpoints),
      },
    }),
    onEvent: log,
    onError: (error) => log({ type: 'worker_error', message: error.message }),
  });
  log({
    type: 'worker_started',
    worker_id: worker.id,
    concurrency: argv.concurrency,
    labels: argv.labels ?? [],
    allow: {
      profiles: worker.allow.profiles,
      dirs: worker.allow.dirs,
      endpoints: worker.allow.endpoints,
      max_approval_wait_seconds: worker.allow.maxApprovalWaitMs / 1000,
      approve_on_timeout: worker.allow.approveOnTimeout,
      in_place: worker.allow.inPlace,
    },
  });
  let signals = 0;
  const onSignal = () => {
    signals += 1;
    log({ type: 'worker_draining', running: worker.running(), grace_seconds: signals > 1 ? 0 : argv.grace });
    void worker.drain(signals > 1 ? 0 : argv.grace);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    await worker.stopped;
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
  log({ type: 'worker_stopped', worker_id: worker.id });
  return EXIT.completed;
}

/**
 * What the worker lets a task choose: `--allow-profile`, `--allow-dir`, `--allow-endpoint`, each
 * replacing `worker.allow_profiles`, `worker.allow_dirs`, `worker.allow_endpoints` of
 * `$RHO_HOME/config.yaml`; whatever neither gives is the narrowest (see `taskAllowlist`).
 */
async function workerAllowlist(argv: WorkerArguments, env: NodeJS.ProcessEnv): Promise<TaskAllowlistOptions> {
  const [{ resolveSettings }, { workerSettingsSection }, { allSections, settingsOverrides }] = await Promise.all([
    import('@rho/core/settings'),
    import('@rho/queue/settings'),
    import('../settings.js'),
  ]);
  const resolved = await resolveSettings({
    sections: [workerSettingsSection],
    knownSections: allSections,
    home: rhoHome(env),
    env,
    overrides: settingsOverrides(argv as unknown as Record<string, unknown>, [workerSettingsSection]),
  });
  return resolved.settings.worker;
}

function describe(event: WorkerEvent | { type: string; [key: string]: unknown }): string {
  const e = event as Record<string, unknown>;
  switch (event.type) {
    case 'task_started':
      return `${String(e.task_id)}: started (attempt ${String(e.attempt)}): ${oneLine(String(e.prompt), 60)}`;
    case 'task_session':
      return `${String(e.task_id)}: session ${String(e.session_id)}`;
    case 'task_finished':
      return `${String(e.task_id)}: ${String(e.state)}`;
    case 'task_handed_back':
      return `${String(e.task_id)}: handed back to the queue`;
    case 'task_lost':
      return `${String(e.task_id)}: attempt ${String(e.attempt)} lost: ${String(e.reason)}`;
    case 'task_skipped':
      return `${String(e.task_id)}: skipped (${String(e.state)})`;
    case 'task_refused':
      return `${String(e.task_id)}: refused, not run: ${String(e.reason)}`;
    case 'workspace_swept': {
      const discarded = (e.discarded as { session_id: string }[]).map((item) => item.session_id);
      return `workspaces swept: ${[...(e.removed as string[]), ...discarded].join(', ')} (${String(e.kept)} kept for review)`;
    }
    case 'worker_started':
      return `worker ${String(e.worker_id)} taking tasks (concurrency ${String(e.concurrency)}${(e.labels as string[]).length === 0 ? '' : `, labels ${(e.labels as string[]).join(',')}`}; allows profiles ${(e.allow as { profiles: string[] }).profiles.join(',')})`;
    case 'worker_draining':
      return `stopping: no new tasks; ${String(e.running)} running get ${String(e.grace_seconds)}s before they are handed back`;
    case 'worker_stopped':
      return `worker ${String(e.worker_id)} stopped`;
    case 'worker_error':
      return `worker: ${String(e.message)}`;
    default:
      return `${event.type}`;
  }
}
