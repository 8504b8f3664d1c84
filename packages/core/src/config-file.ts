import type { GenericSchema, InferOutput } from 'valibot';
import * as v from 'valibot';
import type { ConfigPath, ConfigSource } from './config-source.js';
import { configProblem } from './config-source.js';

export {
  configLocation,
  configProblem,
  configSource,
  formatConfigPath,
  parseConfigText,
  readConfigFile,
} from './config-source.js';
export type { ConfigPath, ConfigSource } from './config-source.js';

/**
 * Validates `value` (found at `at` inside `source`) with a valibot schema and returns its output.
 * A schema's messages say what is expected (`v.number('a positive number of seconds')`); the
 * first issue becomes one {@link configProblem}: `FILE:LINE: 'KEY' must be … (got …).`
 *
 * @throws ConfigError naming the file, the key and the line of the first problem.
 */
export function validateConfig<TSchema extends GenericSchema>(
  schema: TSchema,
  value: unknown,
  source: Pick<ConfigSource, 'file' | 'lineOf'>,
  at: ConfigPath = [],
): InferOutput<TSchema> {
  const result = v.safeParse(schema, value, { abortPipeEarly: true });
  if (result.success) return result.output;
  const issue = result.issues[0];
  const path = [...at, ...(issue.path ?? []).map((item) => item.key as string | number)];
  // Valibot's default messages start with "Invalid"; ours say what is expected.
  const message = issue.message.startsWith('Invalid ')
    ? `is invalid: ${issue.message}`
    : /^(must|is|has|needs|names|cannot|may)\b/.test(issue.message)
      ? issue.message
      : `must be ${issue.message}`;
  return (() => {
    throw configProblem(source, path, message, issue.type === 'strict_object' ? undefined : { value: issue.input });
  })();
}
