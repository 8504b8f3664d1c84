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
export const ATIF_ACCEPTED_VERSIONS: readonly string[] = [
  'ATIF-v1.0',
  'ATIF-v1.1',
  'ATIF-v1.2',
  'ATIF-v1.3',
  'ATIF-v1.4',
  'ATIF-v1.5',
  'ATIF-v1.6',
];

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
