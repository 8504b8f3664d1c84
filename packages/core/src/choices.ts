/**
 * The one wording of "pick one of these" in tool errors, so the model reads the same words from
 * the registry's argument checks and from every tool whose choices come from configuration
 * (database aliases, sheets, operations): `'database' must be one of "sales", "hr" (got "x")`.
 */

/** `one of "a", "b"`, or `none configured` when there is nothing to choose from. */
export function oneOf(values: readonly unknown[]): string {
  return values.length === 0 ? 'none configured' : `one of ${values.map((value) => JSON.stringify(value)).join(', ')}`;
}

/** `'name' must be one of "a", "b" (got "x")`: a value that is not among the choices. */
export function mustBeOneOf(name: string, values: readonly unknown[], got?: unknown): string {
  const choices =
    values.length === 0 ? `must be a configured value, and there is none configured` : `must be ${oneOf(values)}`;
  return `'${name}' ${choices}${got === undefined ? '' : ` (got ${gotText(got)})`}`;
}

/** `'name' is required and must be one of "a", "b"`: a missing choice. */
export function requiredOneOf(name: string, values: readonly unknown[]): string {
  return values.length === 0
    ? `'${name}' is required, and there is none configured`
    : `'${name}' is required and must be ${oneOf(values)}`;
}

function gotText(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return String(value);
}
