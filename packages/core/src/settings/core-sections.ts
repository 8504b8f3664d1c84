import type { ModelClientOptions } from '@rho/model-client';
import * as v from 'valibot';
import type { CompactionOptions } from '../compaction.js';
import type { Budgets } from '../session-options.js';
import {
  aboveZero,
  checkedText,
  choice,
  countOfAtLeastOne,
  isMapping,
  mapping,
  retries,
  seconds,
  text,
  wholeAmount,
} from './kinds.js';
import { defineSettingsSection } from './section.js';

/** Reasoning efforts OpenAI-compatible servers accept (`reasoning_effort`). */
export const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;

/** The model client's settings: which model, where, and how its requests are bounded. */
export interface ModelSettings {
  /** The model's name; `gguf:PATH` runs a local GGUF file in this process. */
  readonly model: string;
  /**
   * True when no layer named the model and an endpoint is set: `model` is then only the default
   * (`gpt-5-mini`), not what that server runs; the caller asks the server or records it unknown.
   */
  readonly unnamed?: true;
  /** The GGUF file of `gguf:PATH` (as written), and `RHO_GGUF_TOOL_CHOICE`. */
  readonly gguf?: { readonly path: string; readonly toolChoice?: 'auto' | 'required' | 'none' };
  /** `OPENAI_API_KEY`, when set. */
  readonly apiKey?: string;
  /** The OpenAI-compatible endpoint, when one is set (else the client's default). */
  readonly baseURL?: string;
  /**
   * The model client's options (the model aside). `apiKey` is `no-key` when none is set: local
   * servers (vLLM, Ollama, llama.cpp) need none, but the client requires one.
   */
  readonly clientOptions: Omit<ModelClientOptions, 'model'> & { apiKey: string };
}

const URL_EXAMPLE = 'for example http://localhost:11434/v1 or https://api.openai.com/v1';

/** What is wrong with an OpenAI-compatible endpoint (an http(s) URL with a host), if anything. */
function baseUrlProblem(value: string): string | undefined {
  const trimmed = value.trim();
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed))
    return `must be an http:// or https:// URL, ${URL_EXAMPLE}${/^[\w.-]+(:\d+)?(\/|$)/.test(trimmed) ? `; did you mean http://${trimmed}?` : ''}`;
  let url: URL;
  try {
    url = new URL(trimmed);
  } catch {
    return `is not a valid URL; use a URL ${URL_EXAMPLE}`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `must use http:// or https:// (got ${url.protocol}//), ${URL_EXAMPLE}`;
  if (url.hostname === '') return `has no host; use a URL ${URL_EXAMPLE}`;
  return undefined;
}

const FILE_OVER_ENV =
  'the agent config beats the environment, and a resumed session keeps its saved value (contributing/decisions.md: "for --config, the file still beats the environment, as for every key"; issue 15 for the timeouts)';

/** The model client (`@rho/model-client` sits below core, so core declares its section). */
export const modelSettingsSection = defineSettingsSection({
  name: 'model',
  owner: '@rho/core',
  description: 'The model client: which model, which endpoint, and the bounds of its requests.',
  settings: [
    {
      key: 'model',
      description: 'Model name; gguf:PATH runs a local GGUF file in this process',
      ...text('a model name'),
      env: ['OPENAI_MODEL'],
      flag: 'model',
      emptyFlag: 'unset',
      default: 'gpt-5-mini',
      configBeatsEnv: true,
      pinned: true,
      why: FILE_OVER_ENV,
      save: 'resolved',
    },
    {
      key: 'base_url',
      description: 'OpenAI-compatible endpoint',
      schema: checkedText(baseUrlProblem, (value) => value.trim()),
      env: ['OPENAI_BASE_URL'],
      flag: 'base-url',
      emptyFlag: 'unset',
      configBeatsEnv: true,
      why: 'a --config file beats the environment; on resume OPENAI_BASE_URL beats the saved base_url (a default, not a choice made now: contributing/decisions.md, issue 17)',
    },
    {
      key: 'api_key',
      description: 'API key of the endpoint (no file holds it)',
      files: [],
      ...text(),
      env: ['OPENAI_API_KEY'],
      secret: true,
    },
    {
      key: 'service_tier',
      description: 'OpenAI service_tier (auto, default, flex, scale, priority)',
      ...text(),
      env: ['RHO_AGENT_SERVICE_TIER'],
      emptyFlag: 'unset',
      configBeatsEnv: true,
      pinned: true,
      why: FILE_OVER_ENV,
    },
    {
      key: 'reasoning_effort',
      description: 'Reasoning effort for reasoning models',
      ...choice(REASONING_EFFORTS),
      env: ['RHO_AGENT_REASONING_EFFORT'],
      flag: 'reasoning-effort',
      configBeatsEnv: true,
      pinned: true,
      why: FILE_OVER_ENV,
    },
    {
      key: 'response_format',
      description: 'OpenAI response_format ({type: json_object}, a JSON schema)',
      ...mapping('a mapping such as {type: json_object}'),
    },
    {
      key: 'first_byte_timeout',
      description: 'Seconds to wait for a model answer to start (default 60)',
      ...seconds(),
      env: ['RHO_FIRST_BYTE_TIMEOUT'],
      flag: 'first-byte-timeout',
      configBeatsEnv: true,
      pinned: true,
      why: FILE_OVER_ENV,
    },
    {
      key: 'idle_timeout',
      description: 'Seconds to wait between two chunks of a streamed answer (default 60)',
      ...seconds(),
      env: ['RHO_IDLE_TIMEOUT'],
      flag: 'idle-timeout',
      configBeatsEnv: true,
      pinned: true,
      why: FILE_OVER_ENV,
    },
    {
      key: 'max_retries',
      description: 'Retries of a failed model request (default 8)',
      ...retries(),
      env: ['RHO_MAX_RETRIES'],
      flag: 'max-retries',
      configBeatsEnv: true,
      pinned: true,
      why: FILE_OVER_ENV,
    },
    {
      key: 'max_answer_time',
      description: 'Seconds one model answer may take in all (default 1200)',
      files: [],
      ...seconds(),
      env: ['RHO_MAX_ANSWER_TIME'],
      flag: 'max-answer-time',
    },
    {
      key: 'max_answer_size',
      description: 'Characters of text, reasoning and tool arguments one answer may have (default 4194304)',
      files: [],
      ...wholeAmount('characters', '1048576'),
      env: ['RHO_MAX_ANSWER_SIZE'],
      flag: 'max-answer-size',
    },
    {
      key: 'gguf_tool_choice',
      description: 'gguf: models: how the model is made to call tools (auto, required, none)',
      files: [],
      ...choice(['auto', 'required', 'none'] as const),
      env: ['RHO_GGUF_TOOL_CHOICE'],
    },
  ],
  build(context): ModelSettings {
    const model = context.value<string>('model')!;
    const apiKey = context.value<string>('api_key')?.trim();
    const baseURL = context.value<string>('base_url');
    const reasoningEffort = context.value<string>('reasoning_effort');
    const serviceTier = context.value<string>('service_tier');
    const responseFormat = context.value<Record<string, unknown>>('response_format');
    const firstByte = context.value<number>('first_byte_timeout');
    const idle = context.value<number>('idle_timeout');
    const maxAnswerTime = context.value<number>('max_answer_time');
    const maxAnswerSize = context.value<number>('max_answer_size');
    const maxRetries = context.value<number>('max_retries');
    const toolChoice = context.value<'auto' | 'required' | 'none'>('gguf_tool_choice');
    const named = context.layers('model').some((layer) => layer.kind !== 'default');
    return {
      model,
      ...(named || baseURL === undefined ? {} : { unnamed: true }),
      ...(model.startsWith('gguf:')
        ? { gguf: { path: model.slice('gguf:'.length), ...(toolChoice === undefined ? {} : { toolChoice }) } }
        : {}),
      ...(apiKey === undefined || apiKey === '' ? {} : { apiKey }),
      ...(baseURL === undefined ? {} : { baseURL }),
      clientOptions: {
        ...(baseURL === undefined ? {} : { baseURL }),
        apiKey: apiKey === undefined || apiKey === '' ? 'no-key' : apiKey,
        ...(reasoningEffort === undefined ? {} : { reasoningEffort }),
        ...(firstByte === undefined ? {} : { firstByteTimeoutMs: firstByte * 1000 }),
        ...(idle === undefined ? {} : { idleTimeoutMs: idle * 1000 }),
        ...(maxAnswerTime === undefined ? {} : { maxAnswerMs: maxAnswerTime * 1000 }),
        ...(maxAnswerSize === undefined ? {} : { maxAnswerBytes: maxAnswerSize }),
        ...(maxRetries === undefined ? {} : { maxRetries }),
        ...(serviceTier === undefined ? {} : { serviceTier: serviceTier as ModelClientOptions['serviceTier'] }),
        ...(responseFormat === undefined
          ? {}
          : { responseFormat: responseFormat as unknown as ModelClientOptions['responseFormat'] }),
      },
    };
  },
});

/** Limits of a session's runs. */
export const budgetsSettingsSection = defineSettingsSection({
  name: 'budgets',
  owner: '@rho/core',
  description: "Limits of a run's model calls and duration, and of the session's tokens and cost.",
  mappings: [{ key: 'budgets', unknownKeys: 'error' }],
  // Budgets are nested: `budgets: {max_turns: 20}`.
  aliases: { max_turns: 'budgets', max_tokens: 'budgets', max_cost_usd: 'budgets', max_duration_ms: 'budgets' },
  settings: [
    {
      key: 'budgets.max_turns',
      description: 'Stop after this many model calls in one run',
      ...countOfAtLeastOne('--max-turns 20'),
      flag: 'max-turns',
    },
    {
      key: 'budgets.max_tokens',
      description: 'Stop when the session has used this many tokens',
      ...countOfAtLeastOne('--max-tokens 200000'),
      flag: 'max-tokens',
    },
    {
      key: 'budgets.max_cost_usd',
      description: 'Stop when the session has cost this many USD',
      ...aboveZero('--max-cost 0.5'),
      flag: 'max-cost',
    },
    {
      key: 'budgets.max_duration_ms',
      description: 'Stop a run after this many milliseconds',
      ...aboveZero(),
    },
  ],
  build(context): Budgets {
    const budgets: Budgets = {};
    const turns = context.value<number>('budgets.max_turns');
    const tokens = context.value<number>('budgets.max_tokens');
    const cost = context.value<number>('budgets.max_cost_usd');
    const duration = context.value<number>('budgets.max_duration_ms');
    if (turns !== undefined) budgets.maxTurns = turns;
    if (tokens !== undefined) budgets.maxTokens = tokens;
    if (cost !== undefined) budgets.maxCostUsd = cost;
    if (duration !== undefined) budgets.maxDurationMs = duration;
    return budgets;
  },
});

const tokens = wholeAmount('tokens', '32768');

/** The context window, for automatic compaction. */
export const compactionSettingsSection = defineSettingsSection({
  name: 'compaction',
  owner: '@rho/core',
  description:
    "The model's context window, for automatic compaction (without one: what the server reports, the table of known models, else 32768).",
  settings: [
    {
      key: 'context_window',
      description: "The model's context window in tokens, whatever the model",
      ...tokens,
      env: ['RHO_CONTEXT_WINDOW'],
      flag: 'context-window',
    },
    {
      key: 'context_windows',
      description: 'Context windows per model name ({qwen3-coder: 131072}), when context_window is not set',
      schema: v.pipe(
        v.custom<Record<string, unknown>>(isMapping, 'a mapping of model names to a number of tokens'),
        v.record(v.string(), tokens.schema),
      ),
    },
  ],
  build(context): CompactionOptions {
    const window = context.winner('context_window');
    const perModel = context.value<Record<string, number>>('context_windows');
    return {
      ...(window === undefined
        ? {}
        : {
            contextWindow: window.value as number,
            contextWindowSource: window.kind === 'flag' ? 'flag' : window.kind === 'env' ? 'env' : 'config',
          }),
      ...(perModel === undefined ? {} : { contextWindows: { ...perModel } }),
    };
  },
});
