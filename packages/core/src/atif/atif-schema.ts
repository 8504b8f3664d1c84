/*
 * ATIF-v1.6, Harbor's Agent Trajectory Interchange Format, transcribed from the Pydantic models of
 * the Harbor project (https://github.com/harbor-framework/harbor, formerly laude-institute/harbor,
 * `src/harbor/models/trajectories/*.py`, RFC `docs/rfcs/0001-trajectory-format.md`):
 * - trajectory.py, step.py, content.py, observation_result.py: as vendored at v1.6 by NVIDIA NeMo
 *   Agent Toolkit (`nat/data_models/atif/*.py`, `ATIF_VERSION = "ATIF-v1.6"`), whose documented
 *   deviations from Harbor (default message "", default session_id, empty steps allowed) are undone
 *   here: Harbor requires `message`, `session_id` and at least one step.
 * - tool_call.py, final_metrics.py, content.py: Harbor's own files before v1.7 (ToolCall has no
 *   `extra` until v1.7).
 * - agent.py: Harbor's, plus `tool_definitions` (added in v1.5 per the RFC's version history).
 * - metrics.py: the RFC's MetricsSchema (prompt/completion/cached tokens, cost, token ids, logprobs).
 * Fields added in ATIF-v1.7 (trajectory_id, subagent_trajectories, llm_call_count, extra on tool
 * calls and observation results) are not part of v1.6 and are rejected, as Pydantic's
 * `extra="forbid"` does on every model.
 */

/** The schema version rho writes. */
export const ATIF_SCHEMA_VERSION = 'ATIF-v1.6';

/** Schema versions a v1.6 reader accepts (Harbor's `Literal[...]` at v1.6). */
export const ATIF_ACCEPTED_VERSIONS: readonly string[] = ['ATIF-v1.0', 'ATIF-v1.1', 'ATIF-v1.2', 'ATIF-v1.3', 'ATIF-v1.4', 'ATIF-v1.5', 'ATIF-v1.6'];

/** Where an image of a multimodal content part is stored (ATIF `ImageSource`, v1.6). */
export interface AtifImageSource {
  /** MIME type of the image. */
  media_type: 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';
  /** Relative or absolute file path, or a URL. */
  path: string;
}

/** One part of a multimodal message or observation (ATIF `ContentPart`, v1.6). */
export interface AtifContentPart {
  /** `text` parts carry `text`; `image` parts carry `source`. */
  type: 'text' | 'image';
  /** Text content; required when `type` is `text`, forbidden otherwise. */
  text?: string;
  /** Image reference; required when `type` is `image`, forbidden otherwise. */
  source?: AtifImageSource;
}

/** The agent system that produced a trajectory (ATIF `Agent`). */
export interface AtifAgent {
  /** Name of the agent system. */
  name: string;
  /** Version of the agent system. */
  version: string;
  /** Default model of the trajectory; steps without `model_name` used it. */
  model_name?: string;
  /** Tool/function definitions available to the agent (v1.5). */
  tool_definitions?: Record<string, unknown>[];
  /** Custom agent configuration. */
  extra?: Record<string, unknown>;
}

/** One structured tool invocation of an agent step (ATIF `ToolCall`). */
export interface AtifToolCall {
  /** Identifier of the call; observation results point back to it. */
  tool_call_id: string;
  /** Name of the tool. */
  function_name: string;
  /** Arguments (an object; may be empty). */
  arguments: Record<string, unknown>;
}

/** A reference to a delegated subagent's trajectory (ATIF `SubagentTrajectoryRef`, v1.6 shape). */
export interface AtifSubagentTrajectoryRef {
  /** Session id of the subagent's trajectory. */
  session_id: string;
  /** Where the subagent's trajectory file is. */
  trajectory_path?: string;
  /** Custom metadata. */
  extra?: Record<string, unknown>;
}

/** One result of an observation (ATIF `ObservationResult`). */
export interface AtifObservationResult {
  /** The `tool_call_id` of the step's tool call that produced it; absent for non-tool results. */
  source_call_id?: string;
  /** The output: text, or content parts for multimodal output (v1.6). */
  content?: string | AtifContentPart[];
  /** Trajectories of subagents this result delegated to. */
  subagent_trajectory_ref?: AtifSubagentTrajectoryRef[];
}

/** Environment feedback after a step's actions (ATIF `Observation`). */
export interface AtifObservation {
  /** One result per tool call (or system event). */
  results: AtifObservationResult[];
}

/** Operational data of the model call behind an agent step (ATIF `Metrics`). */
export interface AtifMetrics {
  /** Prompt tokens, including cached tokens. */
  prompt_tokens?: number;
  /** Completion tokens. */
  completion_tokens?: number;
  /** Prompt tokens served from the provider's cache. */
  cached_tokens?: number;
  /** Cost of the call in USD. */
  cost_usd?: number;
  /** Token ids of the prompt. */
  prompt_token_ids?: number[];
  /** Token ids of the completion. */
  completion_token_ids?: number[];
  /** Log probabilities of the completion tokens. */
  logprobs?: number[];
  /** Custom metrics. */
  extra?: Record<string, unknown>;
}

/** Totals of a whole trajectory (ATIF `FinalMetrics`). */
export interface AtifFinalMetrics {
  /** Sum of prompt tokens of all model calls, including cached tokens. */
  total_prompt_tokens?: number;
  /** Sum of completion tokens. */
  total_completion_tokens?: number;
  /** Sum of cached prompt tokens. */
  total_cached_tokens?: number;
  /** Total cost in USD; null when unknown (no call had a price: see `extra.unpriced_calls`). */
  total_cost_usd?: number | null;
  /** Number of steps (documented in `notes` when it differs from `steps.length`). */
  total_steps?: number;
  /** Custom aggregate metrics. */
  extra?: Record<string, unknown>;
}

/** Who originated a step. */
export type AtifStepSource = 'system' | 'user' | 'agent';

/** One step of a trajectory (ATIF `Step`). Agent-only fields are refused on other steps. */
export interface AtifStep {
  /** 1-based position; steps are numbered 1, 2, 3, ... */
  step_id: number;
  /** ISO-8601 time of the step. */
  timestamp?: string;
  /** Originator of the step. */
  source: AtifStepSource;
  /** Model of this step when it differs from `agent.model_name` (agent steps only). */
  model_name?: string;
  /** Reasoning effort (agent steps only). */
  reasoning_effort?: string | number;
  /** The dialogue message; may be empty. */
  message: string | AtifContentPart[];
  /** The agent's explicit reasoning (agent steps only). */
  reasoning_content?: string;
  /** Tool calls of the step (agent steps only). */
  tool_calls?: AtifToolCall[];
  /** Results of the step's tool calls, or of a system event. */
  observation?: AtifObservation;
  /** Metrics of the model call (agent steps only). */
  metrics?: AtifMetrics;
  /** True for steps copied from an earlier trajectory as context (v1.5). */
  is_copied_context?: boolean;
  /** Custom step metadata. */
  extra?: Record<string, unknown>;
}

/** A complete ATIF-v1.6 trajectory document. */
export interface AtifTrajectory {
  /** ATIF version string, `ATIF-v1.6` for rho's exports. */
  schema_version: string;
  /** Identifier of the agent run. */
  session_id: string;
  /** The agent system. */
  agent: AtifAgent;
  /** The interaction history, at least one step. */
  steps: AtifStep[];
  /** Free-form notes. */
  notes?: string;
  /** Totals of the trajectory. */
  final_metrics?: AtifFinalMetrics;
  /** Path of the file this trajectory continues in. */
  continued_trajectory_ref?: string;
  /** Custom root metadata. */
  extra?: Record<string, unknown>;
}

/** One way a document fails ATIF-v1.6: where (a JSON path like `steps[2].metrics`) and why. */
export interface AtifValidationIssue {
  path: string;
  message: string;
}

type Check = (value: unknown, path: string, issues: AtifValidationIssue[]) => void;

interface FieldSpec {
  check: Check;
  required?: boolean;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const string: Check = (value, path, issues) => {
  if (typeof value !== 'string') issues.push({ path, message: `must be a string, got ${describe(value)}` });
};

// Pydantic's `int` accepts integral numbers only; `ge` bounds as in the models.
function integer(minimum?: number): Check {
  return (value, path, issues) => {
    if (typeof value !== 'number' || !Number.isInteger(value)) issues.push({ path, message: `must be an integer, got ${describe(value)}` });
    else if (minimum !== undefined && value < minimum) issues.push({ path, message: `must be >= ${minimum}, got ${value}` });
  };
}

const finiteNumber: Check = (value, path, issues) => {
  if (typeof value !== 'number' || !Number.isFinite(value)) issues.push({ path, message: `must be a number, got ${describe(value)}` });
};

const boolean: Check = (value, path, issues) => {
  if (typeof value !== 'boolean') issues.push({ path, message: `must be a boolean, got ${describe(value)}` });
};

const dictionary: Check = (value, path, issues) => {
  if (!isObject(value)) issues.push({ path, message: `must be an object, got ${describe(value)}` });
};

function literal(allowed: readonly string[]): Check {
  return (value, path, issues) => {
    if (typeof value !== 'string' || !allowed.includes(value)) issues.push({ path, message: `must be one of ${allowed.map((item) => JSON.stringify(item)).join(', ')}, got ${describe(value)}` });
  };
}

function list(item: Check, options: { minLength?: number } = {}): Check {
  return (value, path, issues) => {
    if (!Array.isArray(value)) {
      issues.push({ path, message: `must be an array, got ${describe(value)}` });
      return;
    }
    if (options.minLength !== undefined && value.length < options.minLength) issues.push({ path, message: `must have at least ${options.minLength} item(s)` });
    value.forEach((element, index) => item(element, `${path}[${index}]`, issues));
  };
}

function oneOf(...checks: Check[]): Check {
  return (value, path, issues) => {
    const attempts = checks.map((check) => {
      const found: AtifValidationIssue[] = [];
      check(value, path, found);
      return found;
    });
    if (attempts.some((found) => found.length === 0)) return;
    // Report the alternative that got furthest (fewest issues).
    const best = attempts.reduce((a, b) => (b.length < a.length ? b : a));
    issues.push(...best);
  };
}

/** A Pydantic model with `extra="forbid"`: unknown keys are errors; `None` is the same as absent. */
function model(fields: Record<string, FieldSpec>, validate?: (value: Record<string, unknown>, path: string, issues: AtifValidationIssue[]) => void): Check {
  return (value, path, issues) => {
    if (!isObject(value)) {
      issues.push({ path, message: `must be an object, got ${describe(value)}` });
      return;
    }
    for (const key of Object.keys(value)) {
      if (!(key in fields)) issues.push({ path: join(path, key), message: 'is not a field of ATIF-v1.6 (extra fields are forbidden)' });
    }
    for (const [key, spec] of Object.entries(fields)) {
      const field = value[key];
      if (field === undefined || field === null) {
        if (spec.required === true) issues.push({ path: join(path, key), message: 'is required' });
        continue;
      }
      spec.check(field, join(path, key), issues);
    }
    validate?.(value, path, issues);
  };
}

// ISO 8601 as Python's datetime.fromisoformat accepts it (after replacing a trailing Z).
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}([T ]\d{2}(:\d{2}(:\d{2}([.,]\d{1,9})?)?)?(Z|[+-]\d{2}(:?\d{2}(:?\d{2}([.,]\d{1,6})?)?)?)?)?$/;

const timestampCheck: Check = (value, path, issues) => {
  if (typeof value !== 'string') {
    issues.push({ path, message: `must be a string, got ${describe(value)}` });
    return;
  }
  if (!ISO_TIMESTAMP.test(value) || Number.isNaN(Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value))) {
    issues.push({ path, message: `must be an ISO 8601 timestamp, got ${JSON.stringify(value)}` });
  }
};

const imageSource = model({
  media_type: { check: literal(['image/jpeg', 'image/png', 'image/gif', 'image/webp']), required: true },
  path: { check: string, required: true },
});

const contentPart = model(
  {
    type: { check: literal(['text', 'image']), required: true },
    text: { check: string },
    source: { check: imageSource },
  },
  (value, path, issues) => {
    const hasText = value.text !== undefined && value.text !== null;
    const hasSource = value.source !== undefined && value.source !== null;
    if (value.type === 'text') {
      if (!hasText) issues.push({ path: join(path, 'text'), message: "is required when type='text'" });
      if (hasSource) issues.push({ path: join(path, 'source'), message: "is not allowed when type='text'" });
    } else if (value.type === 'image') {
      if (!hasSource) issues.push({ path: join(path, 'source'), message: "is required when type='image'" });
      if (hasText) issues.push({ path: join(path, 'text'), message: "is not allowed when type='image'" });
    }
  },
);

const content = oneOf(string, list(contentPart));

const agent = model({
  name: { check: string, required: true },
  version: { check: string, required: true },
  model_name: { check: string },
  tool_definitions: { check: list(dictionary) },
  extra: { check: dictionary },
});

const toolCall = model({
  tool_call_id: { check: string, required: true },
  function_name: { check: string, required: true },
  arguments: { check: dictionary, required: true },
});

const subagentTrajectoryRef = model({
  session_id: { check: string, required: true },
  trajectory_path: { check: string },
  extra: { check: dictionary },
});

const observationResult = model({
  source_call_id: { check: string },
  content: { check: content },
  subagent_trajectory_ref: { check: list(subagentTrajectoryRef) },
});

const observation = model({
  results: { check: list(observationResult), required: true },
});

const metrics = model({
  prompt_tokens: { check: integer() },
  completion_tokens: { check: integer() },
  cached_tokens: { check: integer() },
  cost_usd: { check: finiteNumber },
  prompt_token_ids: { check: list(integer()) },
  completion_token_ids: { check: list(integer()) },
  logprobs: { check: list(finiteNumber) },
  extra: { check: dictionary },
});

const finalMetrics = model({
  total_prompt_tokens: { check: integer() },
  total_completion_tokens: { check: integer() },
  total_cached_tokens: { check: integer() },
  total_cost_usd: { check: finiteNumber },
  total_steps: { check: integer(0) },
  extra: { check: dictionary },
});

const AGENT_ONLY_FIELDS = ['model_name', 'reasoning_effort', 'reasoning_content', 'tool_calls', 'metrics'] as const;

const step = model(
  {
    step_id: { check: integer(1), required: true },
    timestamp: { check: timestampCheck },
    source: { check: literal(['system', 'user', 'agent']), required: true },
    model_name: { check: string },
    reasoning_effort: { check: oneOf(string, finiteNumber) },
    message: { check: content, required: true },
    reasoning_content: { check: string },
    tool_calls: { check: list(toolCall) },
    observation: { check: observation },
    metrics: { check: metrics },
    is_copied_context: { check: boolean },
    extra: { check: dictionary },
  },
  (value, path, issues) => {
    if (value.source === 'agent') return;
    for (const field of AGENT_ONLY_FIELDS) {
      if (value[field] !== undefined && value[field] !== null) {
        issues.push({ path: join(path, field), message: `is only applicable when source is 'agent', but source is ${describe(value.source)}` });
      }
    }
  },
);

const trajectory = model(
  {
    schema_version: { check: literal(ATIF_ACCEPTED_VERSIONS), required: true },
    session_id: { check: string, required: true },
    agent: { check: agent, required: true },
    steps: { check: list(step, { minLength: 1 }), required: true },
    notes: { check: string },
    final_metrics: { check: finalMetrics },
    continued_trajectory_ref: { check: string },
    extra: { check: dictionary },
  },
  (value, _path, issues) => {
    if (!Array.isArray(value.steps)) return;
    value.steps.forEach((item: unknown, index) => {
      if (!isObject(item)) return;
      if (item.step_id !== index + 1) issues.push({ path: `steps[${index}].step_id`, message: `expected ${index + 1} (sequential from 1), got ${describe(item.step_id)}` });
      const results = isObject(item.observation) && Array.isArray(item.observation.results) ? item.observation.results : [];
      const callIds = new Set(Array.isArray(item.tool_calls) ? item.tool_calls.map((call: unknown) => (isObject(call) ? call.tool_call_id : undefined)) : []);
      results.forEach((result: unknown, resultIndex) => {
        if (isObject(result) && typeof result.source_call_id === 'string' && !callIds.has(result.source_call_id)) {
          issues.push({ path: `steps[${index}].observation.results[${resultIndex}].source_call_id`, message: `references '${result.source_call_id}', which is not among step ${describe(item.step_id)}'s tool_calls` });
        }
      });
    });
  },
);

/**
 * Checks a document against ATIF-v1.6 as Harbor's Pydantic models define it: field names (extra
 * fields are refused), required fields, types, enums, agent-only step fields, sequential step ids
 * and observation results that point at the step's own tool calls. Returns every issue found; an
 * empty list means the document is valid.
 */
export function validateAtifTrajectory(value: unknown): AtifValidationIssue[] {
  const issues: AtifValidationIssue[] = [];
  trajectory(value, '', issues);
  return issues;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}
