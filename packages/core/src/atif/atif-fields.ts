/* Helpers of trace-to-atif.ts: reading loosely typed trace fields into ATIF shapes. */
import type { AtifStep, AtifToolCall } from './atif-types.js';

const STEP_FIELD_ORDER: readonly (keyof AtifStep)[] = [
  'step_id',
  'timestamp',
  'source',
  'model_name',
  'reasoning_effort',
  'message',
  'reasoning_content',
  'tool_calls',
  'observation',
  'metrics',
  'is_copied_context',
  'extra',
];

// Results are attached after a step is created; put the keys back in the order of the schema for readers of the JSON.
export function inFieldOrder(step: AtifStep): AtifStep {
  const ordered: Record<string, unknown> = {};
  for (const key of STEP_FIELD_ORDER) if (step[key] !== undefined) ordered[key] = step[key];
  return ordered as unknown as AtifStep;
}

export function toolCallsOf(value: unknown): AtifToolCall[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((call: unknown, index): AtifToolCall[] => {
    if (!isPlainObject(call)) return [];
    const fn = isPlainObject(call.function) ? call.function : {};
    return [
      {
        tool_call_id: typeof call.id === 'string' && call.id !== '' ? call.id : `call_${index}`,
        function_name: stringOf(fn.name),
        arguments: argumentsOf(fn.arguments),
      },
    ];
  });
}

/** Arguments as an object: JSON text is parsed; text that is not a JSON object is kept under `_raw`, as the original did. */
function argumentsOf(value: unknown): Record<string, unknown> {
  if (isPlainObject(value)) return value;
  if (typeof value !== 'string') return value === undefined || value === null ? {} : { _raw: value };
  if (value.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(value);
    return isPlainObject(parsed) ? parsed : { _raw: value };
  } catch {
    return { _raw: value };
  }
}

export function contentOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return JSON.stringify(value);
}

export function stringOf(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);
}

// Token counts must be integers in ATIF; anything else counts as zero.
export function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
