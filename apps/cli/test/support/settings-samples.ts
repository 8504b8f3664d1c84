// A valid value of every setting of every settings section, for each source that may set it, and
// where it lands in the run's typed settings: the table the settings tests (in process, and
// through `rho config show`) walk. A setting without a sample fails those tests, so a new
// setting is covered when it is added.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { SettingDefinition } from '@rho/core/settings';
import { HOOK_EVENTS } from '@rho/hooks';
import type { RunSettings } from '../../src/settings.js';

/** Where a value comes from, in the tests' words (`fallback`: a standard variable below the files). */
export type Source = 'default' | 'home' | 'agent' | 'saved' | 'env' | 'fallback' | 'flag';

/** The settings of `rho worker` too. */
export type AllSettings = RunSettings & {
  mcpServe: {
    profiles?: readonly string[];
    directories?: readonly string[];
    defaultProfile?: string;
    onDisconnect: string;
    maxConcurrent: number;
  };
  worker: {
    profiles?: string[];
    dirs?: string[];
    endpoints?: string[];
    maxApprovalWaitMs?: number;
    approveOnTimeout?: boolean;
    inPlace?: boolean;
  };
};

export interface Sample {
  /** The value written in a file by the n-th source. */
  file?(n: number): unknown;
  /** A variable's text, or a flag's value as typed (default: `file`'s, as text). */
  text?(n: number): unknown;
  /** What `values[key]` holds for the n-th source. */
  value(n: number, source: Source): unknown;
  /** Where it lands in the typed settings, and what lands there for the n-th source. */
  landed(settings: AllSettings): unknown;
  typed?(n: number, source: Source, present: readonly Source[]): unknown;
  /** What the key needs around it to land (export on, a task id, a gguf: model). */
  context?: { env?: Record<string, string>; overrides?: Record<string, unknown> };
  /** Cannot be set together with the other settings (the daytona flags choose the backend). */
  alone?: boolean;
}

const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'];

/** The hook events, in the order the hooks section keeps them. */
const HOOK_EVENT_ORDER = HOOK_EVENTS;

/** Directories and files the samples name, made once under `root`. */
export function sampleFiles(root: string): void {
  for (let n = 0; n < 10; n += 1) {
    mkdirSync(join(root, `dir${n}`), { recursive: true });
    writeFileSync(join(root, `dir${n}`, 'f.sqlite'), '');
    writeFileSync(join(root, `dbs${n}.yaml`), `databases:\n  file${n}: {type: sqlite, path: ./dir${n}/f.sqlite}\n`);
  }
}

/** The samples, for files made by {@link sampleFiles} under `root`. */
export function settingSamples(root: string): Record<string, Sample> {
  const same = (landed: Sample['landed'], make: (n: number) => unknown, extra: Partial<Sample> = {}): Sample => ({
    file: make,
    text: (n) => String(make(n)),
    value: (n) => make(n),
    landed,
    ...extra,
  });
  const number = (landed: Sample['landed'], make: (n: number) => number, typed?: (n: number) => unknown): Sample => ({
    file: make,
    text: (n) => String(make(n)),
    value: (n) => make(n),
    landed,
    ...(typed === undefined ? {} : { typed: (n: number) => typed(n) }),
  });
  const list = (landed: Sample['landed'], make: (n: number) => string): Sample => ({
    file: (n) => [make(n)],
    text: (n) => make(n),
    value: (n) => [make(n)],
    landed,
  });
  const dir = (n: number) => join(root, `dir${n}`);
  return {
    model: same(
      (s) => s.model.model,
      (n) => `m${n}`,
    ),
    base_url: same(
      (s) => s.model.baseURL,
      (n) => `http://h${n}.example/v1`,
    ),
    api_key: same(
      (s) => s.model.apiKey,
      (n) => `sk-key-${n}xxxxxxxx`,
    ),
    service_tier: same(
      (s) => s.model.clientOptions.serviceTier,
      (n) => `tier${n}`,
    ),
    reasoning_effort: same(
      (s) => s.model.clientOptions.reasoningEffort,
      (n) => EFFORTS[n % EFFORTS.length],
    ),
    response_format: {
      file: (n) => ({ type: `t${n}` }),
      value: (n) => ({ type: `t${n}` }),
      landed: (s) => s.model.clientOptions.responseFormat,
    },
    first_byte_timeout: number(
      (s) => s.model.clientOptions.firstByteTimeoutMs,
      (n) => n * 10,
      (n) => n * 10_000,
    ),
    idle_timeout: number(
      (s) => s.model.clientOptions.idleTimeoutMs,
      (n) => n * 10,
      (n) => n * 10_000,
    ),
    max_retries: number(
      (s) => s.model.clientOptions.maxRetries,
      (n) => n,
    ),
    max_answer_time: number(
      (s) => s.model.clientOptions.maxAnswerMs,
      (n) => n * 10,
      (n) => n * 10_000,
    ),
    max_answer_size: number(
      (s) => s.model.clientOptions.maxAnswerBytes,
      (n) => n * 1000,
    ),
    gguf_tool_choice: same(
      (s) => s.model.gguf?.toolChoice,
      (n) => ['auto', 'required', 'none'][n % 3],
      {
        context: { overrides: { model: 'gguf:/models/m.gguf' } },
      },
    ),
    system_prompt: same(
      (s) => s.prompt.systemPrompt,
      (n) => `/prompts/p${n}.md`,
    ),
    vars: { file: (n) => ({ k: `v${n}` }), value: (n) => ({ k: `v${n}` }), landed: (s) => s.prompt.vars },
    var: { text: (n) => `k=v${n}`, value: (n) => [`k=v${n}`], landed: (s) => s.prompt.flagVars },
    vars_file: same(
      (s) => s.prompt.varsFile,
      (n) => `/vars/v${n}.yaml`,
    ),
    working_dir: same((s) => s.workingDir.workingDir, dir, {
      typed: (n, source) => (source === 'default' ? process.cwd() : dir(n)),
    }),
    profile: same(
      (s) => s.profile.name,
      (n) => ['readonly', 'developer', 'developer-bash-only', 'eval'][n % 4],
    ),
    backend: {
      file: (n) => `b${n}`,
      text: (n) => `b${n}`,
      value: (n) => ({ name: `b${n}`, options: {} }),
      landed: (s) => s.backend.name,
      typed: (n) => `b${n}`,
    },
    dockerfile: {
      text: (n) => `/docker/D${n}`,
      value: (n) => `/docker/D${n}`,
      landed: (s) => [s.backend.name, s.backend.options['dockerfile']],
      typed: (n) => ['daytona', `/docker/D${n}`],
      alone: true,
    },
    snapshot: {
      text: (n) => `snap${n}`,
      value: (n) => `snap${n}`,
      landed: (s) => [s.backend.name, s.backend.options['snapshot']],
      typed: (n) => ['daytona', `snap${n}`],
      alone: true,
    },
    keep_sandbox: {
      text: () => true,
      value: () => true,
      landed: (s) => [s.backend.name, s.backend.options['keep_sandbox']],
      typed: () => ['daytona', true],
      alone: true,
    },
    'budgets.max_turns': number(
      (s) => s.budgets.maxTurns,
      (n) => n,
    ),
    'budgets.max_tokens': number(
      (s) => s.budgets.maxTokens,
      (n) => n * 1000,
    ),
    'budgets.max_cost_usd': number(
      (s) => s.budgets.maxCostUsd,
      (n) => n / 10,
    ),
    'budgets.max_duration_ms': number(
      (s) => s.budgets.maxDurationMs,
      (n) => n * 1000,
    ),
    context_window: {
      file: (n) => n * 1000,
      text: (n) => String(n * 1000),
      value: (n) => n * 1000,
      landed: (s) => [s.compaction.contextWindow, s.compaction.contextWindowSource],
      typed: (n, source) => [n * 1000, source === 'flag' ? 'flag' : source === 'env' ? 'env' : 'config'],
    },
    context_windows: {
      file: (n) => ({ m: n * 1000 }),
      value: (n) => ({ m: n * 1000 }),
      landed: (s) => s.compaction.contextWindows,
    },
    // A resumed session's mode is what its directory holds (no workspace.json here: in place),
    // whatever its saved settings or the environment say, and a flag may only name that mode (one
    // naming the other is refused: apps/cli/test/workspaces.test.ts). Isolated comes from the
    // agent config here; the variable and the flag name in-place, which fits a resumed session.
    'workspace.mode': {
      file: (n) => (n === 1 ? 'isolated' : 'in-place'),
      text: () => 'in-place',
      value: (n, source) => (source === 'env' || source === 'flag' || n !== 1 ? 'in-place' : 'isolated'),
      landed: (s) => s.workspace.mode,
      typed: (n, source) => (source === 'agent' && n === 1 ? 'isolated' : 'in-place'),
      // A profile that writes: under readonly an isolated workspace is not made (it resolves in-place).
      context: { overrides: { profile: 'developer' } },
    },
    'workspace.checkpoints': {
      file: (n) => n % 2 === 1,
      text: (n) => n % 2 === 1,
      value: (n) => n % 2 === 1,
      landed: (s) => s.workspace.checkpoints,
    },
    auto_approve: {
      file: () => true,
      text: () => true,
      value: (_n, source) => source !== 'default',
      landed: (s) => s.approvals.autoApprove,
    },
    when_unattended: same(
      (s) => s.approvals.unattended,
      (n) => ['wait', 'withhold'][n % 2],
    ),
    approval_timeout: {
      file: (n) => `${n + 1}m`,
      text: (n) => `${n + 1}m`,
      value: (n) => (n + 1) * 60_000,
      landed: (s) => s.approvals.timeoutMs,
    },
    on_timeout: same(
      (s) => s.approvals.onTimeout,
      (n) => ['deny', 'approve'][n % 2],
    ),
    // Each source's hooks on an event of its own: both files' hooks land (merged by event).
    hooks: {
      file: (n) => ({ [HOOK_EVENT_ORDER[n]!]: [{ command: `notify ${n}` }] }),
      value: (n) => ({ [HOOK_EVENT_ORDER[n]!]: [{ command: `notify ${n}` }] }),
      landed: (s) => HOOK_EVENT_ORDER.filter((event) => s.hooks.hooks[event].length > 0),
    },
    tool_packages: list(
      (s) => s.toolPackages.packages.map((item) => item.spec),
      (n) => `pkg${n}`,
    ),
    databases: {
      file: (n) => ({ [`db${n}`]: { type: 'postgres', database: `d${n}` } }),
      value: (n) => ({ [`db${n}`]: { type: 'postgres', database: `d${n}` } }),
      landed: (s) => s.databases.aliases.map((alias) => alias.alias),
      typed: (n) => [`db${n}`],
    },
    db_config: {
      text: (n) => join(root, `dbs${n}.yaml`),
      value: (n) => join(root, `dbs${n}.yaml`),
      landed: (s) => s.databases.file,
      typed: (n) => resolve(root, `dbs${n}.yaml`),
    },
    mcp_servers: {
      file: (n) => ({ [`s${n}`]: { command: `c${n}` } }),
      value: (n) => ({ [`s${n}`]: { command: `c${n}` } }),
      landed: (s) => s.mcp.servers.map((server) => server.name),
      typed: (n) => [`s${n}`],
    },
    fleet: {
      file: (n) => ({ url: `postgres://h${n}.example/d` }),
      text: (n) => `postgres://h${n}.example/d`,
      value: (n) => ({ url: `postgres://h${n}.example/d` }),
      landed: (s) => s.fleet.config?.url,
      typed: (n) => `postgres://h${n}.example/d`,
    },
    label: {
      text: (n) => `k=v${n}`,
      value: (n) => [`k=v${n}`],
      landed: (s) => s.fleet.labels,
      typed: (n) => ({ k: `v${n}` }),
    },
    'otel.endpoint': same(
      (s) => s.otel?.endpoint,
      (n) => `http://o${n}.example:4318`,
      {
        // The standard variables alone do not turn export on.
        typed: (n, _source, present) =>
          present.every((source) => source === 'fallback') ? undefined : `http://o${n}.example:4318`,
      },
    ),
    'otel.headers': {
      file: (n) => ({ h: `v${n}` }),
      value: (n) => ({ h: `v${n}` }),
      landed: (s) => s.otel?.headers,
      context: { overrides: { otel: '' } },
    },
    'otel.content': {
      file: () => true,
      text: () => 'true',
      value: (_n, source) => source !== 'default',
      landed: (s) => s.otel?.content,
      context: { overrides: { otel: '' } },
    },
    task_id: same(
      (s) => s.queue.task?.id,
      (n) => `t${n}`,
    ),
    task_attempt: same(
      (s) => s.queue.task?.attempt,
      (n) => String(n + 1),
      {
        typed: (n) => n + 1,
        context: { env: { RHO_TASK_ID: 'task' } },
      },
    ),
    task_lease_file: same(
      (s) => s.queue.lease?.file,
      (n) => `/leases/l${n}`,
      {
        context: { env: { RHO_TASK_LEASE_SECONDS: '30' } },
      },
    ),
    task_lease_seconds: same(
      (s) => s.queue.lease?.seconds,
      (n) => String(n * 10),
      {
        typed: (n) => n * 10,
        context: { env: { RHO_TASK_LEASE_FILE: '/leases/x' } },
      },
    ),
    task_approval_deadline: same(
      (s) => s.queue.approvalDeadline?.toISOString(),
      (n) => new Date(Date.UTC(2026, 0, n + 1)).toISOString(),
    ),
    task_labels: same(
      (s) => s.queue.labels,
      (n) => `l${n}`,
      { typed: (n) => ({ [`l${n}`]: '' }) },
    ),
    'mcp_serve.profiles': list(
      (s) => s.mcpServe.profiles,
      (n) => `p${n}`,
    ),
    'mcp_serve.directories': list(
      (s) => s.mcpServe.directories,
      (n) => `/srv${n}`,
    ),
    'mcp_serve.default_profile': same(
      (s) => s.mcpServe.defaultProfile,
      (n) => `p${n}`,
    ),
    'mcp_serve.on_disconnect': same(
      (s) => s.mcpServe.onDisconnect,
      (n) => (n % 2 === 0 ? 'cancel' : 'keep'),
    ),
    'mcp_serve.max_concurrent': number(
      (s) => s.mcpServe.maxConcurrent,
      (n) => n + 1,
    ),
    'worker.allow_profiles': list(
      (s) => s.worker.profiles,
      (n) => `p${n}`,
    ),
    'worker.allow_dirs': list(
      (s) => s.worker.dirs,
      (n) => `/d${n}`,
    ),
    'worker.allow_endpoints': list(
      (s) => s.worker.endpoints,
      (n) => `http://e${n}.example`,
    ),
    'worker.max_approval_wait': {
      file: (n) => `${n + 1}h`,
      text: (n) => `${n + 1}h`,
      value: (n) => (n + 1) * 3_600_000,
      landed: (s) => s.worker.maxApprovalWaitMs,
    },
    'worker.allow_approve_on_timeout': {
      file: () => true,
      text: () => true,
      value: () => true,
      landed: (s) => s.worker.approveOnTimeout,
    },
    'worker.allow_in_place': {
      file: () => true,
      text: () => true,
      value: () => true,
      landed: (s) => s.worker.inPlace,
    },
  };
}

/**
 * The sources of a setting, lowest precedence first, as docs/settings.md documents them:
 * defaults < standard variables (`fallbackEnv`) < `$RHO_HOME/config.yaml` < the agent config (or a
 * resumed session's saved settings) < the environment < flags, with a setting's declared
 * exceptions: `configBeatsEnv` (the agent config over the environment), `pinned` (the saved
 * settings over the environment).
 */
export function precedence(setting: SettingDefinition, resumed: boolean): Source[] {
  const files = setting.files ?? ['agent'];
  const file: Source = resumed ? 'saved' : 'agent';
  const aboveEnv = resumed ? setting.pinned === true : setting.configBeatsEnv === true;
  const order: Source[] = [];
  if (setting.default !== undefined) order.push('default');
  if ((setting.fallbackEnv ?? []).length > 0) order.push('fallback');
  if (files.includes('home')) order.push('home');
  if (files.includes('agent') && !aboveEnv) order.push(file);
  if ((setting.env ?? []).length > 0) order.push('env');
  if (files.includes('agent') && aboveEnv) order.push(file);
  if (setting.flag !== undefined) order.push('flag');
  return order;
}
