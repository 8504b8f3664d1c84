/**
 * `@rho/queue/settings`: the task queue's settings sections: what a run started by `rho worker`
 * is told (its task and lease), and what `rho worker` lets a task choose. Light: no driver loads.
 */
import { defineSettingsSection, listOfText, text } from '@rho/core/settings';
import type { TaskAllowlistOptions } from './task-allowlist.js';

/** What a run started for a queued task knows of it (the worker's environment tells it). */
export interface QueueRunSettings {
  /** The task and attempt (`RHO_TASK_ID`, `RHO_TASK_ATTEMPT`), recorded in `run_start`. */
  readonly task?: { readonly id: string; readonly attempt: number };
  /** The worker's lease of this attempt (`RHO_TASK_LEASE_FILE`, `RHO_TASK_LEASE_SECONDS`): the session stops when it lapses. */
  readonly lease?: { readonly file: string; readonly seconds: number };
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
  ],
  build(context): QueueRunSettings {
    const id = context.value<string>('task_id');
    const attempt = Number(context.value<string>('task_attempt') ?? '1');
    const file = context.value<string>('task_lease_file');
    const seconds = Number(context.value<string>('task_lease_seconds'));
    return {
      ...(id === undefined ? {} : { task: { id, attempt: Number.isInteger(attempt) && attempt > 0 ? attempt : 1 } }),
      ...(file === undefined || !Number.isFinite(seconds) || seconds <= 0 ? {} : { lease: { file, seconds } }),
    };
  },
});

const list = listOfText('a list of non-empty strings');

/** What `rho worker` lets a submitted task choose: flags replace `worker:` of `$RHO_HOME/config.yaml`, key by key. */
export const workerSettingsSection = defineSettingsSection({
  name: 'worker',
  owner: '@rho/queue',
  description:
    'What rho worker lets a queued task choose; whatever is not given is the narrowest (the readonly profile, the worker’s directory, no endpoint of the task’s own).',
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
  ],
  build(context): TaskAllowlistOptions {
    const profiles = context.value<string[]>('worker.allow_profiles');
    const dirs = context.value<string[]>('worker.allow_dirs');
    const endpoints = context.value<string[]>('worker.allow_endpoints');
    return {
      ...(profiles === undefined ? {} : { profiles }),
      ...(dirs === undefined ? {} : { dirs }),
      ...(endpoints === undefined ? {} : { endpoints }),
    };
  },
});
