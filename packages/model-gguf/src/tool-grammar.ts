import type { ToolSpec } from '@rho/model-client';

/** A JSON schema in the subset node-llama-cpp turns into a GBNF grammar. */
export type GrammarSchema = Record<string, unknown>;

const SCALARS = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/**
 * A tool's JSON schema reduced to what node-llama-cpp's grammar builder understands (types,
 * properties, required, items, enum, const, oneOf/anyOf, string formats it knows); descriptions,
 * bounds, defaults and patterns are dropped, so the grammar accepts a superset of what the
 * schema allows and the tool's own validation still has the last word.
 */
export function grammarSchemaOf(schema: unknown, depth = 0): GrammarSchema {
  if (depth > 16 || schema === null || typeof schema !== 'object' || Array.isArray(schema)) return anyValue();
  const source = schema as Record<string, unknown>;
  if ('const' in source) return { const: source['const'] as never };
  if (Array.isArray(source['enum']) && source['enum'].length > 0) return { enum: source['enum'] };
  const alternatives = Array.isArray(source['oneOf'])
    ? source['oneOf']
    : Array.isArray(source['anyOf'])
      ? source['anyOf']
      : undefined;
  if (alternatives !== undefined && alternatives.length > 0)
    return { oneOf: alternatives.map((item) => grammarSchemaOf(item, depth + 1)) };
  const type = source['type'];
  if (Array.isArray(type)) {
    const types = type.filter((item): item is string => typeof item === 'string');
    return types.length === 0
      ? anyValue()
      : { oneOf: types.map((item) => grammarSchemaOf({ ...source, type: item }, depth + 1)) };
  }
  if (type === 'object' || (type === undefined && typeof source['properties'] === 'object')) {
    const properties = (source['properties'] ?? {}) as Record<string, unknown>;
    const result: GrammarSchema = {
      type: 'object',
      properties: Object.fromEntries(
        Object.entries(properties).map(([key, value]) => [key, grammarSchemaOf(value, depth + 1)]),
      ),
    };
    const required = Array.isArray(source['required'])
      ? source['required'].filter((key): key is string => typeof key === 'string' && key in properties)
      : [];
    result['required'] = required;
    if (Object.keys(properties).length === 0) result['additionalProperties'] = true;
    return result;
  }
  if (type === 'array') return { type: 'array', items: grammarSchemaOf(source['items'], depth + 1) };
  if (typeof type === 'string' && SCALARS.has(type)) return { type };
  return anyValue();
}

function anyValue(): GrammarSchema {
  return { type: ['string', 'number', 'boolean', 'null'] };
}

/**
 * The schema of one answer when tools are offered: a call `{"name": <tool>, "arguments": {...}}`
 * of one of the tools, or (unless a call is required) `{"answer": "..."}`.
 */
export function answerSchemaOf(tools: readonly ToolSpec[], callRequired: boolean): GrammarSchema {
  const calls: GrammarSchema[] = tools.map((tool) => ({
    type: 'object',
    properties: { name: { const: tool.function.name }, arguments: grammarSchemaOf(tool.function.parameters) },
    required: ['name', 'arguments'],
  }));
  if (!callRequired) calls.push({ type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] });
  return calls.length === 1 ? calls[0]! : { oneOf: calls };
}
