/**
 * `@rho/queue/settings`: the task queue's settings sections: what a run started by `rho worker`
 * is told (its task and lease), and what `rho worker` lets a task choose. Light: no driver loads.
 */
import { defineSettingsSection, duration, flagOrSwitch, listOfText, text } from '@rho/core/settings';
import type { TaskAllowlistOptions } from './task-allowlist.js';

/** What a run started for a queued task knows of it (the worker's environment tells it). */
export interface QueueRunSettings {
  /** The task and attempt (`RHO_TASK_ID`, `RHO_TASK_ATTEMPT`), recorded in `run_start`. */
  readonly task?: { readonly id: string; readonly attempt: number };
  /** The worker's lease of this attempt (`RHO_TASK_LEASE_FILE`, `RHO_TASK_LEASE_SECONDS`): the session stops when it lapses. */
  readonly lease?: { readonly file: string; readonly seconds: number };
  /** No tool call waits for approval past this moment (`RHO_TASK_APPROVAL_DEADLINE`): a little before the task's deadline. */
  readonly approvalDeadline?: Date;
  /** The task's labels (`RHO_TASK_LABELS`) as the session's labels in the fleet: each label a key, with an empty value. */
  readonly labels?: Readonly<Record<string, string>>;
}

/** A run of a queued task: set by `rho worker` in the environment of the run it starts. */
export const queueSettingsSection = defineSettingsSection({
  name: 'queue',
  owner: '@rho/queue',
  description: 'What a run started by rho worker knows of its task: set by the worker, not by hand.',
  settings: [
    { key: 'task_id', description: 'The queued task this run is for', files: [], ...text(), env: ['RHO_TASK_ID'] },
    { key: 'task_attempt', description: 'Its attempt (1, 2, ...)', files: [], ...text(), env: ['RHO_TASK_ATTEMPT'] },
    {
      key: 'task_lease_file',
      description: "The worker's lease file of the attempt, renewed while the worker holds it",
      files: [],
      ...text(),
      env: ['RHO_TASK_LEASE_FILE'],
    },
    {
      key: 'task_lease_seconds',
      description: 'The lease, in seconds: past 80% of it without renewal the session stops itself',
      files: [],
      ...text(),
      env: ['RHO_TASK_LEASE_SECONDS'],
    },
    {
      key: 'task_approval_deadline',
      description:
        "No tool call waits for approval past this time (ISO-8601, a little before the task's deadline): then the timeout answers",
      files: [],
      ...text(),
      env: ['RHO_TASK_APPROVAL_DEADLINE'],
    },
    {
      key: 'task_labels',
      description:
        "The task's labels, comma-separated: they become the session's labels in the fleet (each a key with an empty value), for rho ps --label and rho stats cost --by label",
      files: [],
      ...text(),
      env: ['RHO_TASK_LABELS'],
    },
  ],
  build(context): QueueRunSettings {
    const id = context.value<string>('task_id');
    const attempt = Number(context.value<string>('task_attempt') ?? '1');
    const file = context.value<string>('task_lease_file');
    const seconds = Number(context.value<string>('task_lease_seconds'));
    const until = new Date(context.value<string>('task_approval_deadline') ?? Number.NaN);
    const labels = (context.value<string>('task_labels') ?? '')
      .split(',')
      .map((label) => label.trim())
      .filter((label) => label !== '');
    return {
      ...(id === undefined ? {} : { task: { id, attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : 1 } }),
      ...(file === undefined || !Number.isFinite(seconds) || seconds <= 0 ? {} : { lease: { file, seconds } }),
      ...(Number.isNaN(until.getTime()) ? {} : { approvalDeadline: until }),
      ...(labels.length === 0 ? {} : { labels: Object.fromEntries(labels.map((label) => [label, ''])) }),
    };
  },
});

const list = listOfText('a list of non-empty strings');

/** What `rho worker` lets a submitted task choose: flags replace `worker:` of `$RHO_HOME/config.yaml`, key by key. */
export const workerSettingsSection = defineSettingsSection({
  name: 'worker',
  owner: '@rho/queue',
  description:
    'What rho worker lets a queued task choose; whatever is not given is the narrowest (the readonly profile, the worker’s directory, no endpoint of the task’s own, calls waiting an hour at most for approval, timeouts that deny, no in-place writes).',
  mappings: [{ key: 'worker', unknownKeys: 'error' }],
  settings: [
    {
      key: 'worker.allow_profiles',
      description: 'Profiles a task may name (the first: for tasks naming none)',
      files: ['home'],
      ...list,
      flag: 'allow-profile',
    },
    {
      key: 'worker.allow_dirs',
      description: "Directories a task's working_dir, config and databases must lie in",
      files: ['home'],
      ...list,
      flag: 'allow-dir',
    },
    {
      key: 'worker.allow_endpoints',
      description: "Model endpoints a task's base_url may name (the worker sends its own key there)",
      files: ['home'],
      ...list,
      flag: 'allow-endpoint',
    },
    {
      key: 'worker.max_approval_wait',
      description:
        "Longest a tool call of a task (auto_approve: false) waits for approval (default 1h); a task's approval_timeout may ask no more",
      files: ['home'],
      ...duration('1h'),
      flag: 'max-approval-wait',
    },
    {
      key: 'worker.allow_approve_on_timeout',
      description:
        'Whether a task may set on_timeout: approve (a call nobody answered runs; never a dangerous one); default false: refused',
      files: ['home'],
      ...flagOrSwitch(),
      flag: 'allow-approve-on-timeout',
    },
    {
      key: 'worker.allow_in_place',
      description:
        'Whether a task may set workspace: in-place under a profile that may write files (its changes land in the working directory unreviewed); default false: refused, and a task leaving workspace out runs isolated',
      files: ['home'],
      ...flagOrSwitch(),
      flag: 'allow-in-place',
    },
  ],
  build(context): TaskAllowlistOptions {
    const profiles = context.value<string[]>('worker.allow_profiles');
    const dirs = context.value<string[]>('worker.allow_dirs');
    const endpoints = context.value<string[]>('worker.allow_endpoints');
    const maxApprovalWaitMs = context.value<number>('worker.max_approval_wait');
    const approveOnTimeout = context.value<boolean>('worker.allow_approve_on_timeout');
    const inPlace = context.value<boolean>('worker.allow_in_place');
    return {
      ...(profiles === undefined ? {} : { profiles }),
      ...(dirs === undefined ? {} : { dirs }),
      ...(endpoints === undefined ? {} : { endpoints }),
      ...(maxApprovalWaitMs === undefined ? {} : { maxApprovalWaitMs }),
      ...(approveOnTimeout === undefined ? {} : { approveOnTimeout }),
      ...(inPlace === undefined ? {} : { inPlace }),
    };
  },
});
