import { mustBeOneOf, requiredOneOf } from '../choices.js';
import type { JsonObjectSchema, JsonSchema } from '../json-schema.js';

/** The outcome of validating a tool call's arguments against the tool's schema. */
export type ValidationResult = { ok: true; value: Record<string, unknown> } | { ok: false; problems: string[] };

/**
 * Validates and coerces arguments the way models need: `"true"` → true, `"5"` → 5, `null` for an
 * optional parameter → absent. Unknown keys are dropped unless the schema allows them, so a tool
 * only ever sees what it declared.
 */
export function validateArguments(schema: JsonObjectSchema, input: unknown): ValidationResult {
  const problems: string[] = [];
  const value = coerceObject(schema, input, '', problems);
  return problems.length === 0 ? { ok: true, value: value as Record<string, unknown> } : { ok: false, problems };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'object') return 'an object';
  return String(value);
}

function label(path: string): string {
  return path === '' ? 'arguments' : `'${path}'`;
}

function coerceObject(schema: JsonObjectSchema, input: unknown, path: string, problems: string[]): unknown {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    problems.push(`${label(path)} must be a JSON object (got ${describe(input)})`);
    return input;
  }
  const source = input as Record<string, unknown>;
  const result: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(source)) {
    const propertySchema = schema.properties[key];
    const childPath = path === '' ? key : `${path}.${key}`;
    if (propertySchema === undefined) {
      if (schema.additionalProperties === true) result[key] = raw;
      continue;
    }
    if (raw === null || raw === undefined) continue;
    result[key] = coerce(propertySchema, raw, childPath, problems);
  }
  for (const required of schema.required ?? []) {
    if (result[required] === undefined) {
      const name = path === '' ? required : `${path}.${required}`;
      const property = schema.properties[required];
      // A missing choice names the choices, so the model can pick one on its next call.
      problems.push(
        property?.type === 'string' && property.enum !== undefined
          ? requiredOneOf(name, property.enum)
          : `'${name}' is required`,
      );
    }
  }
  return result;
}

function coerce(schema: JsonSchema, raw: unknown, path: string, problems: string[]): unknown {
  switch (schema.type) {
    case 'string': {
      let value = raw;
      if (typeof raw === 'number' || typeof raw === 'boolean') value = String(raw);
      if (typeof value !== 'string') {
        problems.push(`${label(path)} must be a string (got ${describe(raw)})`);
        return raw;
      }
      if (schema.enum !== undefined && !schema.enum.includes(value)) {
        problems.push(mustBeOneOf(path, schema.enum, raw));
      }
      return value;
    }
    case 'integer':
    case 'number': {
      let value = raw;
      if (typeof raw === 'string' && raw.trim() !== '' && Number.isFinite(Number(raw))) value = Number(raw);
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        problems.push(
          `${label(path)} must be ${schema.type === 'integer' ? 'an integer' : 'a number'} (got ${describe(raw)})`,
        );
        return raw;
      }
      if (schema.type === 'integer' && !Number.isInteger(value)) {
        problems.push(`${label(path)} must be an integer (got ${describe(raw)})`);
        return raw;
      }
      if (schema.minimum !== undefined && value < schema.minimum)
        problems.push(`${label(path)} must be at least ${schema.minimum} (got ${value})`);
      if (schema.maximum !== undefined && value > schema.maximum)
        problems.push(`${label(path)} must be at most ${schema.maximum} (got ${value})`);
      return value;
    }
    case 'boolean': {
      if (typeof raw === 'boolean') return raw;
      if (typeof raw === 'string') {
        const lower = raw.trim().toLowerCase();
        if (['true', '1', 'yes'].includes(lower)) return true;
        if (['false', '0', 'no', ''].includes(lower)) return false;
      }
      if (raw === 1 || raw === 0) return raw === 1;
      problems.push(`${label(path)} must be a boolean (got ${describe(raw)})`);
      return raw;
    }
    case 'array': {
      let value = raw;
      // Some models send an array as its JSON text.
      if (typeof raw === 'string' && raw.trim().startsWith('[')) {
        try {
          value = JSON.parse(raw);
        } catch {
          // reported below
        }
      }
      if (!Array.isArray(value)) {
        problems.push(`${label(path)} must be an array (got ${describe(raw)})`);
        return raw;
      }
      return value.map((item, index) => coerce(schema.items, item, `${path}[${index}]`, problems));
    }
    case 'object': {
      let value = raw;
      if (typeof raw === 'string' && raw.trim().startsWith('{')) {
        try {
          value = JSON.parse(raw);
        } catch {
          // reported by coerceObject
        }
      }
      return coerceObject(schema, value, path, problems);
    }
  }
}
