import { ConfigError } from '@rho/core';
import { parseDuration } from '@rho/core/settings';

/**
 * One task to run on a worker: what `rho submit` takes, one JSON object a line in a tasks file.
 * Field names are snake_case, as in the files users write.
 */
export interface TaskSpec {
  /** The task, in words. */
  prompt: string;
  /** Permission profile on the worker (a name, or a YAML path there); default the worker's default. */
  profile?: string;
  /** Agent configuration YAML, a path on the worker (`rho --config`). */
  config?: string;
  /** Model name (`rho --model`). */
  model?: string;
  /** Working directory of the session on the worker; default the worker's own directory. */
  working_dir?: string;
  /** Tags: a worker started with `--labels` takes only tasks carrying all of its labels. */
  labels?: string[];
  /** Higher runs first (default 0). */
  priority?: number;
  /** Budget: stop after this many model calls (`--max-turns`). */
  max_turns?: number;
  /** Budget: stop when the session has used this many tokens (`--max-tokens`). */
  max_tokens?: number;
  /** Budget: stop when the session has cost this many USD (`--max-cost`). */
  max_cost?: number;
  /**
   * Approve every tool call (`-y`). Default true. False: a call the profile leaves to approval
   * waits for an answer (`rho approve`/`rho deny` from any node of the fleet) while the worker
   * holds the task, up to `approval_timeout` and never past the deadline.
   */
  auto_approve?: boolean;
  /**
   * With `auto_approve: false`: how long a call waits for its answer, a duration (`90s`, `30m`,
   * `2h`). Default the worker's `--max-approval-wait` (1h); at most that, and always cut short to
   * end before the deadline.
   */
  approval_timeout?: string;
  /**
   * With `auto_approve: false`: what a timeout answers, `deny` (the default) or `approve` (only on
   * a worker started with `--allow-approve-on-timeout`; a dangerous call is denied all the same).
   */
  on_timeout?: 'deny' | 'approve';
  /** When the task expires: an ISO-8601 time, or a duration from submission (`90s`, `30m`, `2h`, `1d`). */
  deadline?: string;
  /** How many times the task may be started in all when workers die under it (default 3). */
  max_attempts?: number;
  /**
   * Where the session changes files (`rho --workspace`): `isolated`, a workspace of its own on the
   * worker (a git worktree on a branch `rho/<session id>`, or a copy of a plain directory) that
   * a person reviews with `rho diff` and keeps with `rho apply`; or `in-place`, the working
   * directory itself. Default: `isolated` when the task's profile may write files, `in-place`
   * for one that does not (readonly). A worker refuses `in-place` for a profile that writes
   * unless it was started with `--allow-in-place`.
   */
  workspace?: 'isolated' | 'in-place';
  /**
   * A question of `rho eval sql --queue`: the worker runs it as `rho eval sql` runs a question
   * (readonly profile, the `sqlite` tool on its database, `submit_sql`) and reports the session's
   * outcome; the submitter grades it. `prompt` is the question's task text, `model` and the
   * budgets apply as for any task.
   */
  sql_eval?: SqlEvalTask;
}

/** What a worker needs to run one eval question; see {@link TaskSpec.sql_eval}. */
export interface SqlEvalTask {
  /** The dataset's question id. */
  question_id: string;
  /** The database's name (`db_id`). */
  db_id: string;
  /** Folder of the databases on the worker (`<dir>/<db_id>/<db_id>.sqlite`). */
  databases_dir?: string;
  /** A dataset bundled with rho (`chinook`): the worker's own copy, when `databases_dir` is not given. */
  dataset?: string;
  /** The system prompt's text (default the built-in one). */
  system_prompt?: string;
  /** Seconds for the question's session (default 300). */
  question_timeout?: number;
  /** Seconds for one query of the agent's `sqlite` tool (default 30). */
  query_timeout?: number;
  /** OpenAI-compatible endpoint (default the worker's `OPENAI_BASE_URL`); the key is always the worker's. */
  base_url?: string;
  /** Reasoning effort for reasoning models. */
  reasoning_effort?: string;
  /** Seconds to wait for a model answer to start. */
  first_byte_timeout?: number;
  /** Seconds to wait between two chunks of a streamed answer. */
  idle_timeout?: number;
  /** Retries of a failed model request. */
  max_retries?: number;
}

const SQL_EVAL_KEYS: Record<keyof SqlEvalTask, 'string' | 'number' | 'integer'> = {
  question_id: 'string',
  db_id: 'string',
  databases_dir: 'string',
  dataset: 'string',
  system_prompt: 'string',
  question_timeout: 'number',
  query_timeout: 'number',
  base_url: 'string',
  reasoning_effort: 'string',
  first_byte_timeout: 'number',
  idle_timeout: 'number',
  max_retries: 'integer',
};

const KEYS: Record<keyof TaskSpec, 'string' | 'number' | 'integer' | 'boolean' | 'labels' | 'sql_eval'> = {
  prompt: 'string',
  profile: 'string',
  config: 'string',
  model: 'string',
  working_dir: 'string',
  labels: 'labels',
  priority: 'integer',
  max_turns: 'integer',
  max_tokens: 'integer',
  max_cost: 'number',
  auto_approve: 'boolean',
  approval_timeout: 'string',
  on_timeout: 'string',
  deadline: 'string',
  max_attempts: 'integer',
  workspace: 'string',
  sql_eval: 'sql_eval',
};

const LABEL = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

/** Checks one task object; throws a ConfigError naming `where` (for example `tasks.jsonl:3`) and the field. */
export function parseTaskSpec(value: unknown, where: string, now: Date = new Date()): TaskSpec {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError({
      message: `${where}: a task is a JSON object with at least "prompt".`,
      code: 'task_invalid',
    });
  }
  const fail = (field: string, message: string): never => {
    throw new ConfigError({ message: `${where}: ${field}: ${message}`, code: 'task_invalid', field });
  };
  const record = value as Record<string, unknown>;
  for (const [key, item] of Object.entries(record)) {
    const kind = KEYS[key as keyof TaskSpec];
    if (kind === undefined) fail(key, `unknown field (known: ${Object.keys(KEYS).join(', ')}).`);
    if (item === undefined || item === null) continue;
    if (kind === 'sql_eval')
      checkSqlEval(item, (field, message) => fail(field === '' ? 'sql_eval' : `sql_eval.${field}`, message));
    else if (kind === 'labels') {
      if (!Array.isArray(item) || item.some((label) => typeof label !== 'string' || !LABEL.test(label)))
        fail(key, 'a list of labels: letters, digits, _ and -, starting with a letter or digit.');
    } else if (kind === 'integer') {
      if (typeof item !== 'number' || !Number.isInteger(item)) fail(key, 'must be a whole number.');
    } else if (typeof item !== (kind === 'number' ? 'number' : kind)) fail(key, `must be a ${kind}.`);
  }
  const spec = Object.fromEntries(Object.entries(record).filter(([, item]) => item !== undefined && item !== null));
  const task = spec as unknown as TaskSpec;
  if (typeof task.prompt !== 'string' || task.prompt.trim() === '') fail('prompt', 'required, a non-empty string.');
  for (const key of ['max_turns', 'max_tokens', 'max_attempts'] as const)
    if (task[key] !== undefined && task[key] < 1) fail(key, 'must be at least 1.');
  if (task.max_cost !== undefined && !(task.max_cost > 0)) fail('max_cost', 'must be more than 0.');
  if (task.priority !== undefined && Math.abs(task.priority) > 1_000_000)
    fail('priority', 'must be between -1000000 and 1000000.');
  if (task.deadline !== undefined) {
    const at = deadlineFrom(task.deadline, now);
    if (at === undefined) fail('deadline', `'${task.deadline}' is neither an ISO-8601 time nor a duration like 30m.`);
    task.deadline = at!.toISOString();
  }
  if (task.approval_timeout !== undefined && parseDuration(task.approval_timeout) === undefined)
    fail('approval_timeout', `'${task.approval_timeout}' is not a duration like 90s, 30m or 2h.`);
  if (task.on_timeout !== undefined && task.on_timeout !== 'deny' && task.on_timeout !== 'approve')
    fail('on_timeout', `'${String(task.on_timeout)}' is neither deny nor approve.`);
  for (const key of ['approval_timeout', 'on_timeout'] as const)
    if (task[key] !== undefined && task.auto_approve !== false)
      fail(
        key,
        'applies to a task with auto_approve: false (its calls that need approval wait); add it, or leave this out.',
      );
  if (task.workspace !== undefined && task.workspace !== 'isolated' && task.workspace !== 'in-place')
    fail('workspace', `'${String(task.workspace)}' is neither isolated nor in-place.`);
  if (task.workspace !== undefined && task.sql_eval !== undefined)
    fail(
      'workspace',
      'does not apply to an sql_eval question (it runs readonly and changes no file); leave workspace out.',
    );
  if (task.labels !== undefined) task.labels = [...new Set(task.labels)].sort();
  return task;
}

function checkSqlEval(value: unknown, fail: (field: string, message: string) => never): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail('', 'an object with question_id, db_id and databases_dir or dataset.');
  const record = value as Record<string, unknown>;
  for (const [key, item] of Object.entries(record)) {
    const kind = SQL_EVAL_KEYS[key as keyof SqlEvalTask];
    if (kind === undefined) fail(key, `unknown field (known: ${Object.keys(SQL_EVAL_KEYS).join(', ')}).`);
    if (item === undefined || item === null) continue;
    if (kind === 'integer' ? !Number.isInteger(item) || (item as number) < 0 : typeof item !== kind)
      fail(key, kind === 'integer' ? 'must be a whole number, 0 or more.' : `must be a ${kind}.`);
    if (kind === 'number' && !((item as number) > 0)) fail(key, 'must be more than 0.');
  }
  for (const key of ['question_id', 'db_id'] as const)
    if (typeof record[key] !== 'string' || record[key] === '') fail(key, 'required, a non-empty string.');
  if (typeof record.databases_dir !== 'string' && typeof record.dataset !== 'string')
    fail('databases_dir', 'required unless dataset names a bundled dataset.');
}

/** An ISO-8601 time, or a duration (`45s`, `30m`, `2h`, `1d`) counted from `now`. */
export function deadlineFrom(text: string, now: Date = new Date()): Date | undefined {
  const duration = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(text);
  if (duration !== null) {
    const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[duration[2] as 'ms'];
    return new Date(now.getTime() + Number(duration[1]) * unit);
  }
  if (!/^\d{4}-\d{2}-\d{2}/.test(text)) return undefined;
  const at = new Date(text);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

/**
 * Parses a tasks file: one JSON object a line (blank lines and lines starting with `#` skipped).
 * Every bad line is reported, with its number, in one ConfigError; nothing is returned then.
 */
export function parseTaskFile(text: string, name: string, now: Date = new Date()): TaskSpec[] {
  const tasks: TaskSpec[] = [];
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((line, index) => {
    const where = `${name}:${index + 1}`;
    if (line.trim() === '' || line.trimStart().startsWith('#')) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      problems.push(`${where}: not valid JSON (${(error as Error).message}).`);
      return;
    }
    try {
      tasks.push(parseTaskSpec(value, where, now));
    } catch (error) {
      problems.push((error as Error).message);
    }
  });
  if (problems.length > 0) {
    const shown = problems.slice(0, 20);
    throw new ConfigError({
      message: `${problems.length} bad line${problems.length === 1 ? '' : 's'} in ${name}; nothing was submitted:\n${shown.join('\n')}${problems.length > shown.length ? `\n... and ${problems.length - shown.length} more` : ''}`,
      code: 'task_invalid',
      file: name,
    });
  }
  if (tasks.length === 0)
    throw new ConfigError({
      message: `${name} holds no task (one JSON object a line).`,
      code: 'task_invalid',
      file: name,
    });
  return tasks;
}

/** A model client's endpoint options, as a queued question carries them (never the key). */
export interface TaskClientOptions {
  baseURL?: string;
  reasoningEffort?: string;
  firstByteTimeoutMs?: number;
  idleTimeoutMs?: number;
  maxRetries?: number;
}

/** The fields of a queued question that carry these client options (seconds in the task, as its file format says). */
export function taskClientFields(
  options: TaskClientOptions,
): Pick<SqlEvalTask, 'base_url' | 'reasoning_effort' | 'first_byte_timeout' | 'idle_timeout' | 'max_retries'> {
  // Tasks count in seconds, as the flags do (to the microsecond: 0.7 s stays 0.7, not 0.7000000000000001).
  const seconds = (ms: number | undefined) => (ms === undefined ? undefined : Math.round(ms * 1000) / 1e6);
  const fields = {
    base_url: options.baseURL,
    reasoning_effort: options.reasoningEffort,
    first_byte_timeout: seconds(options.firstByteTimeoutMs),
    idle_timeout: seconds(options.idleTimeoutMs),
    max_retries: options.maxRetries,
  };
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

/** The client options a queued question names, over the worker's own (`own`); the endpoint is decided by the caller. */
export function taskClientOptions(task: SqlEvalTask, own: TaskClientOptions): Omit<TaskClientOptions, 'baseURL'> {
  const options = {
    reasoningEffort: task.reasoning_effort ?? own.reasoningEffort,
    firstByteTimeoutMs: task.first_byte_timeout === undefined ? own.firstByteTimeoutMs : task.first_byte_timeout * 1000,
    idleTimeoutMs: task.idle_timeout === undefined ? own.idleTimeoutMs : task.idle_timeout * 1000,
    maxRetries: task.max_retries ?? own.maxRetries,
  };
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}
