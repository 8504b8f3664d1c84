/* The ATIF-v1.6 validator; the document types and their sources are in atif-types.ts. */
import { ATIF_ACCEPTED_VERSIONS } from './atif-types.js';
import type { AtifValidationIssue } from './atif-types.js';
export { ATIF_ACCEPTED_VERSIONS, ATIF_SCHEMA_VERSION } from './atif-types.js';
export type {
  AtifImageSource,
  AtifContentPart,
  AtifAgent,
  AtifToolCall,
  AtifSubagentTrajectoryRef,
  AtifObservationResult,
  AtifObservation,
  AtifMetrics,
  AtifFinalMetrics,
  AtifStepSource,
  AtifStep,
  AtifTrajectory,
  AtifValidationIssue,
} from './atif-types.js';

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
    if (typeof value !== 'number' || !Number.isInteger(value))
      issues.push({ path, message: `must be an integer, got ${describe(value)}` });
    else if (minimum !== undefined && value < minimum)
      issues.push({ path, message: `must be >= ${minimum}, got ${value}` });
  };
}

const finiteNumber: Check = (value, path, issues) => {
  if (typeof value !== 'number' || !Number.isFinite(value))
    issues.push({ path, message: `must be a number, got ${describe(value)}` });
};

const boolean: Check = (value, path, issues) => {
  if (typeof value !== 'boolean') issues.push({ path, message: `must be a boolean, got ${describe(value)}` });
};

const dictionary: Check = (value, path, issues) => {
  if (!isObject(value)) issues.push({ path, message: `must be an object, got ${describe(value)}` });
};

function literal(allowed: readonly string[]): Check {
  return (value, path, issues) => {
    if (typeof value !== 'string' || !allowed.includes(value))
      issues.push({
        path,
        message: `must be one of ${allowed.map((item) => JSON.stringify(item)).join(', ')}, got ${describe(value)}`,
      });
  };
}

function list(item: Check, options: { minLength?: number } = {}): Check {
  return (value, path, issues) => {
    if (!Array.isArray(value)) {
      issues.push({ path, message: `must be an array, got ${describe(value)}` });
      return;
    }
    if (options.minLength !== undefined && value.length < options.minLength)
      issues.push({ path, message: `must have at least ${options.minLength} item(s)` });
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
function model(
  fields: Record<string, FieldSpec>,
  validate?: (value: Record<string, unknown>, path: string, issues: AtifValidationIssue[]) => void,
): Check {
  return (value, path, issues) => {
    if (!isObject(value)) {
      issues.push({ path, message: `must be an object, got ${describe(value)}` });
      return;
    }
    for (const key of Object.keys(value)) {
      if (!(key in fields))
        issues.push({ path: join(path, key), message: 'is not a field of ATIF-v1.6 (extra fields are forbidden)' });
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
const ISO_TIMESTAMP =
  /^\d{4}-\d{2}-\d{2}([T ]\d{2}(:\d{2}(:\d{2}([.,]\d{1,9})?)?)?(Z|[+-]\d{2}(:?\d{2}(:?\d{2}([.,]\d{1,6})?)?)?)?)?$/;

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
        issues.push({
          path: join(path, field),
          message: `is only applicable when source is 'agent', but source is ${describe(value.source)}`,
        });
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
      if (item.step_id !== index + 1)
        issues.push({
          path: `steps[${index}].step_id`,
          message: `expected ${index + 1} (sequential from 1), got ${describe(item.step_id)}`,
        });
      const results =
        isObject(item.observation) && Array.isArray(item.observation.results) ? item.observation.results : [];
      const callIds = new Set(
        Array.isArray(item.tool_calls)
          ? item.tool_calls.map((call: unknown) => (isObject(call) ? call.tool_call_id : undefined))
          : [],
      );
      results.forEach((result: unknown, resultIndex) => {
        if (isObject(result) && typeof result.source_call_id === 'string' && !callIds.has(result.source_call_id)) {
          issues.push({
            path: `steps[${index}].observation.results[${resultIndex}].source_call_id`,
            message: `references '${result.source_call_id}', which is not among step ${describe(item.step_id)}'s tool_calls`,
          });
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
