import { readFileSync } from 'node:fs';
import { ConfigError } from './errors.js';
import { loadYaml } from './internal/yaml.js';

/**
 * The reader of configuration files (YAML with each key's line) and the wording of their
 * problems; without valibot, so that reading a file (a session's settings) loads no schema
 * library. {@link validateConfig} (config-file.ts) adds the schemas.
 */

/** A key path inside a configuration document: `['budgets', 'max_turns']`, `['tools', 0]`. */
export type ConfigPath = readonly (string | number)[];

/**
 * A configuration document read from YAML (or built in code), with the line of each key so that
 * an error can name where to look. Every config file rho reads goes through this one reader.
 */
export interface ConfigSource {
  /** The file, as it is named in messages (a path, or a description such as `--config`). */
  readonly file: string;
  /** The parsed document (`undefined` for an empty file). */
  readonly value: unknown;
  /** The 1-based line of the key at `path` (of its nearest ancestor that exists), if known. */
  lineOf(path: ConfigPath): number | undefined;
}

/** A document made in code (no lines). */
export function configSource(value: unknown, file: string): ConfigSource {
  return { file, value, lineOf: () => undefined };
}

/**
 * Parses YAML text as a configuration document.
 *
 * @throws ConfigError naming the file and the line for text that is not valid YAML.
 */
export function parseConfigText(text: string, file: string): ConfigSource {
  const yaml = loadYaml();
  const lineCounter = new yaml.LineCounter();
  const document = yaml.parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  const error = document.errors[0];
  if (error !== undefined) {
    const line = error.linePos?.[0]?.line;
    throw new ConfigError({
      message: `${file}${line === undefined ? '' : `:${line}`}: not valid YAML: ${firstLine(error.message)}`,
      file,
      ...(line === undefined ? {} : { line }),
      code: 'config_error',
    });
  }
  const value: unknown = document.toJS({ maxAliasCount: 100 });
  const lineOf = (path: ConfigPath): number | undefined => {
    let node: unknown = document.contents;
    let line: number | undefined;
    for (const segment of path) {
      if (yaml.isMap(node)) {
        const pair = node.items.find((item) => yaml.isScalar(item.key) && String(item.key.value) === String(segment));
        if (pair === undefined) break;
        const range = (pair.key as { range?: [number, number, number] } | null)?.range;
        if (range !== undefined) line = lineCounter.linePos(range[0]).line;
        node = pair.value;
      } else if (yaml.isSeq(node) && typeof segment === 'number') {
        const item = node.items[segment] as { range?: [number, number, number] } | undefined;
        if (item?.range === undefined) break;
        line = lineCounter.linePos(item.range[0]).line;
        node = item;
      } else break;
    }
    if (line === undefined && path.length === 0) {
      const range = (document.contents as { range?: [number, number, number] } | null)?.range;
      if (range !== undefined) line = lineCounter.linePos(range[0]).line;
    }
    return line;
  };
  return { file, value, lineOf };
}

/**
 * Reads a YAML configuration file; `undefined` when it does not exist (`ENOENT`, or `ENOTDIR`: a
 * parent is not a directory).
 *
 * @throws ConfigError naming the file for one that cannot be read or is not valid YAML.
 */
export function readConfigFile(path: string, file: string = path): ConfigSource | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new ConfigError({
      message: `Cannot read ${file}: ${(error as Error).message}. Fix its permissions or remove it.`,
      file,
      cause: error,
    });
  }
  return parseConfigText(text, file);
}

/** `file:line` for a key, or the file alone when the line is not known. */
export function configLocation(source: Pick<ConfigSource, 'file' | 'lineOf'>, path: ConfigPath): string {
  const line = source.lineOf(path);
  return line === undefined ? source.file : `${source.file}:${line}`;
}

/** A key path as written in messages: `budgets.max_turns`, `tools[0]`. */
export function formatConfigPath(path: ConfigPath): string {
  return path.reduce<string>(
    (text, segment) =>
      typeof segment === 'number' ? `${text}[${segment}]` : text === '' ? segment : `${text}.${segment}`,
    '',
  );
}

/**
 * The error for a key: `FILE:LINE: 'KEY' must be EXPECTED (got VALUE).` (or the message as given
 * when it does not start with `must`), naming the file, the key and the line.
 */
export function configProblem(
  source: Pick<ConfigSource, 'file' | 'lineOf'>,
  path: ConfigPath,
  message: string,
  got?: { value: unknown },
): ConfigError {
  const key = formatConfigPath(path);
  const line = source.lineOf(path);
  // A message that already says what it got (`must use http:// (got ftp://)`) is not told twice.
  const shown = got === undefined || message.includes('(got ') ? '' : ` (got ${describeValue(got.value)})`;
  const text = `${configLocation(source, path)}: ${key === '' ? 'the document' : `'${key}'`} ${message}${shown}.`;
  return new ConfigError({
    message: text,
    file: source.file,
    ...(key === '' ? {} : { field: key }),
    ...(line === undefined ? {} : { line }),
  });
}

export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = JSON.stringify(value);
  if (text === undefined) return String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.trim();
}
