import type { Argv } from 'yargs';
import type { Terminal } from '../terminal.js';

/** Options every queue command takes: where the queue is. */
export interface QueueConnectionArguments {
  fleet?: string;
  queueSchema?: string;
}

/** Arguments of `rho submit`. */
export interface SubmitArguments extends QueueConnectionArguments {
  prompt?: string[];
  file?: string;
  profile?: string;
  config?: string;
  model?: string;
  workingDir?: string;
  label?: string[];
  priority?: number;
  maxTurns?: number;
  maxTokens?: number;
  maxCost?: number;
  deadline?: string;
  maxAttempts?: number;
  autoApprove: boolean;
  approvalTimeout?: string;
  onTimeout?: string;
  workspace?: string;
  json: boolean;
}

/** Arguments of `rho tasks`. */
export interface TasksArguments extends QueueConnectionArguments {
  args?: string[];
  submitterRole?: string;
  workerRole?: string;
  label?: string[];
  state?: string[];
  limit?: number;
  json: boolean;
}

/** Arguments of `rho worker`. */
export interface WorkerArguments extends QueueConnectionArguments {
  concurrency: number;
  labels?: string[];
  allowProfile?: string[];
  allowDir?: string[];
  allowEndpoint?: string[];
  maxApprovalWait?: string;
  allowApproveOnTimeout?: boolean;
  allowInPlace?: boolean;
  lease?: number;
  poll?: number;
  grace: number;
  json: boolean;
}

/** Arguments of `rho results`. */
export interface ResultsArguments extends QueueConnectionArguments {
  ids?: string[];
  label?: string[];
  json: boolean;
  wait: boolean;
}

const connection = {
  fleet: {
    type: 'string',
    describe:
      'PostgreSQL URL of the fleet, where the queue lives (default: $RHO_FLEET_URL or fleet.url in $RHO_HOME/config.yaml)',
  },
  'queue-schema': {
    type: 'string',
    describe: "The queue's schema in that database (default: $RHO_QUEUE_SCHEMA or rho_queue)",
  },
} as const;

/** A repeatable option that also takes comma-separated values. */
function list(value: unknown): string[] | undefined {
  if (value === undefined) return undefined;
  return ([] as unknown[])
    .concat(value)
    .flatMap((item) => String(item).split(','))
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/**
 * Registers the task queue: `rho submit`, `rho tasks` (and `rho tasks cancel ID`), `rho worker`,
 * `rho results`. `@rho/queue` (and with it pg-boss and the PostgreSQL driver) loads only when one
 * of them runs.
 */
export function registerQueueCommands(
  parser: Argv,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
  setExit: (code: number) => void,
): Argv {
  const actions = () => import('./queue-actions.js');
  return parser
    .command(
      'submit [prompt..]',
      'Queue a task (or every line of --file tasks.jsonl) for workers on any machine; prints the task ids',
      (command) =>
        command
          .positional('prompt', { type: 'string', array: true, describe: 'The task, in words' })
          .option('file', {
            alias: 'f',
            type: 'string',
            describe: 'JSONL file, one task a line: {"prompt": ..., "labels": [...], "priority": 1, ...}',
          })
          .option('profile', {
            type: 'string',
            describe: 'Permission profile on the worker (default readonly; the worker must allow it: --allow-profile)',
          })
          .option('config', {
            alias: 'c',
            type: 'string',
            describe: 'Agent configuration YAML (a path on the worker, inside a directory it allows)',
          })
          .option('model', { alias: 'm', type: 'string', describe: 'Model name' })
          .option('working-dir', {
            alias: 'w',
            type: 'string',
            describe: "Working directory on the worker (default the worker's; the worker must allow it: --allow-dir)",
          })
          .option('label', {
            alias: 'l',
            type: 'string',
            requiresArg: true,
            describe: 'Label the task (repeatable or comma-separated); workers with --labels take only their labels',
          })
          .option('priority', { type: 'number', describe: 'Higher runs first (default 0)' })
          .option('max-turns', { type: 'number', describe: 'Budget: model calls' })
          .option('max-tokens', { type: 'number', describe: 'Budget: tokens' })
          .option('max-cost', { type: 'number', describe: 'Budget: USD' })
          .option('deadline', {
            type: 'string',
            describe: 'Expire the task at this time (ISO-8601) or after this long (30m, 2h)',
          })
          .option('max-attempts', { type: 'number', describe: 'Starts allowed when workers die under it (default 3)' })
          .option('auto-approve', {
            type: 'boolean',
            default: true,
            describe:
              'Approve tool calls the profile leaves to approval (--no-auto-approve: such a call waits on the worker for rho approve / rho deny from any node)',
          })
          .option('approval-timeout', {
            type: 'string',
            describe:
              "With --no-auto-approve: how long a call waits (30m, 2h; default the worker's --max-approval-wait, 1h), never past the deadline",
          })
          .option('on-timeout', {
            type: 'string',
            describe:
              'With --no-auto-approve: what a timeout answers, deny (default) or approve (the worker must allow it: --allow-approve-on-timeout)',
          })
          .option('workspace', {
            type: 'string',
            describe:
              'isolated (a workspace of its own on the worker, reviewed with rho diff there) or in-place (the working directory; under a profile that writes, the worker must allow it: --allow-in-place). Default: isolated when the profile may write files, in-place for readonly',
          })
          .option('json', { type: 'boolean', default: false, describe: 'Print the ids as a JSON array' })
          .options(connection),
      async (argv) => {
        const { submitAction } = await actions();
        const args = argv as unknown as SubmitArguments;
        setExit(await submitAction({ ...args, ...optionalList('label', list(argv.label)) }, terminal, env));
      },
    )
    .command(
      'tasks [args..]',
      'List queued tasks with their state (queued, running on HOST, done, failed, refused, parked: waits for approval, cancelled, expired); "rho tasks cancel ID" cancels one; "rho tasks roles" prints the GRANT script of submitter and worker roles',
      (command) =>
        command
          .positional('args', {
            type: 'string',
            array: true,
            describe: 'Task ids or prefixes; or: cancel ID...; or: roles',
          })
          .option('submitter-role', {
            type: 'string',
            describe: 'rho tasks roles: group role of submitters (default: rho_queue_submitter)',
          })
          .option('worker-role', {
            type: 'string',
            describe: 'rho tasks roles: group role of workers (default: rho_queue_worker)',
          })
          .option('label', { alias: 'l', type: 'string', requiresArg: true, describe: 'Only tasks with this label' })
          .option('state', {
            type: 'string',
            requiresArg: true,
            describe: 'Only tasks in this state (queued, running, done, failed, cancelled, expired)',
          })
          .option('limit', { alias: 'n', type: 'number', describe: 'At most this many, newest first (default 50)' })
          .option('json', { type: 'boolean', default: false, describe: 'Print the tasks as a JSON array' })
          .options(connection),
      async (argv) => {
        const { tasksAction } = await actions();
        const args = argv as unknown as TasksArguments;
        setExit(
          await tasksAction(
            {
              ...args,
              ...optionalList('label', list(argv.label)),
              ...optionalList('state', list(argv.state)),
            },
            terminal,
            env,
          ),
        );
      },
    )
    .command(
      'worker',
      'Take queued tasks and run each as a session on this machine until stopped (SIGTERM drains)',
      (command) =>
        command
          .option('concurrency', { alias: 'j', type: 'number', default: 1, describe: 'Tasks at the same time' })
          .option('labels', {
            type: 'string',
            requiresArg: true,
            describe: 'Take only tasks carrying all of these labels (comma-separated or repeated)',
          })
          .option('lease', {
            type: 'number',
            describe:
              'Seconds between checks of the queue for tasks whose worker died (default: $RHO_QUEUE_LEASE or 60, at least 10); a task keeps the lease it was submitted with',
          })
          .option('poll', {
            type: 'number',
            describe: 'Seconds between looks for work when no notice arrives (default 2)',
          })
          .option('allow-profile', {
            type: 'string',
            requiresArg: true,
            describe:
              'Profiles a task may name (repeatable or comma-separated; default: readonly, or worker.allow_profiles in $RHO_HOME/config.yaml). The first is used for tasks naming none',
          })
          .option('allow-dir', {
            type: 'string',
            requiresArg: true,
            describe:
              "Directories a task's working_dir, config and databases_dir may lie in (repeatable; default: the worker's working directory, or worker.allow_dirs)",
          })
          .option('allow-endpoint', {
            type: 'string',
            requiresArg: true,
            describe:
              "Model endpoints an eval task's base_url may name, which then get this worker's key (default: none but its own OPENAI_BASE_URL, or worker.allow_endpoints)",
          })
          .option('max-approval-wait', {
            type: 'string',
            describe:
              "Longest a call of a task with auto_approve false waits for approval (default 1h, or worker.max_approval_wait); a task's approval_timeout may ask no more, and no wait passes its deadline",
          })
          .option('allow-approve-on-timeout', {
            type: 'boolean',
            describe:
              'Let a task set on_timeout approve (a call nobody answered then runs; never a dangerous one). Default: such a task is refused',
          })
          .option('allow-in-place', {
            type: 'boolean',
            describe:
              'Let a task set workspace in-place under a profile that may write (its changes land in the working directory unreviewed). Default: such a task is refused; one leaving workspace out runs isolated',
          })
          .option('grace', {
            type: 'number',
            default: 60,
            describe: 'On SIGTERM, seconds running tasks get to finish before they are handed back',
          })
          .option('json', { type: 'boolean', default: false, describe: 'Log what the worker does as JSON lines' })
          .options(connection),
      async (argv) => {
        const { workerAction } = await import('./worker-action.js');
        const args = argv as unknown as WorkerArguments;
        setExit(
          await workerAction(
            {
              ...args,
              ...optionalList('labels', list(argv.labels)),
              ...optionalList('allowProfile', list(argv.allowProfile)),
              // A directory may hold a comma: --allow-dir is repeated, never split.
              ...optionalList(
                'allowDir',
                argv.allowDir === undefined ? undefined : ([] as unknown[]).concat(argv.allowDir).map(String),
              ),
              ...optionalList('allowEndpoint', list(argv.allowEndpoint)),
            },
            terminal,
            env,
          ),
        );
      },
    )
    .command(
      'results [ids..]',
      'Answers and statuses of queued tasks, as a table or JSON lines',
      (command) =>
        command
          .positional('ids', { type: 'string', array: true, describe: 'Task ids or prefixes (default: all)' })
          .option('label', { alias: 'l', type: 'string', requiresArg: true, describe: 'Only tasks with this label' })
          .option('json', { type: 'boolean', default: false, describe: 'One JSON object a line' })
          .option('wait', { type: 'boolean', default: false, describe: 'Wait until every selected task is final' })
          .options(connection),
      async (argv) => {
        const { resultsAction } = await actions();
        const args = argv as unknown as ResultsArguments;
        setExit(await resultsAction({ ...args, ...optionalList('label', list(argv.label)) }, terminal, env));
      },
    );
}

function optionalList<K extends string>(key: K, value: string[] | undefined): Partial<Record<K, string[]>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, string[]>);
}
