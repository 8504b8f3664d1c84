import { resolve } from 'node:path';
import { defineTool } from '@rho/core';
import { capLine } from './internal/cap-line.js';
import { LineSplitter } from './internal/line-splitter.js';
import { OutputCollector } from './internal/output-collector.js';
import { backendOf, errorCode, errorMessage, resolvePath } from './internal/paths.js';
import { failure } from './internal/result.js';
import { RIPGREP_MISSING, SKIPPED_DIRECTORY_GLOBS, resolveRipgrep } from './internal/ripgrep.js';
import { runProcess } from './internal/run-process.js';
import { ProcessSupervisor } from './internal/supervisor.js';
import type { FsToolOptions } from './read-tool.js';
import { readPathRefusal, viewOf, visibleInView } from './internal/read-path.js';
import { scrubEnvironment } from '@rho/permissions/internal';

/** Options of the ripgrep-based tools. */
export interface SearchToolOptions extends FsToolOptions {
  /** Seconds a search may run (default {@link SEARCH_TIMEOUT_SECONDS}). */
  timeoutSeconds?: number;
}

/** Seconds a search may run. */
export const SEARCH_TIMEOUT_SECONDS = 30;
/**
 * Characters shown of one matching line; a longer line (a minified file) is cut around the match,
 * saying how many characters were left out on each side.
 */
export const GREP_MAX_LINE_CHARS = 500;
/** Bytes read of one ripgrep JSON record; a line beyond it is reported without its text. */
const MAX_RECORD_BYTES = 8 * 1024 * 1024;
/** Bytes of output kept in all; past it the search stops as if `max_matches` was reached. */
export const GREP_MAX_OUTPUT_BYTES = 1024 * 1024;

/**
 * `grep`: searches file contents with ripgrep. Output lines are `path:line:text` for matches and
 * `path-line-text` for context lines; ripgrep is stopped as soon as enough matches were seen.
 */
export function createGrepTool(options: SearchToolOptions = {}) {
  const timeoutSeconds = options.timeoutSeconds ?? SEARCH_TIMEOUT_SECONDS;
  return defineTool({
    name: 'grep',
    description:
      'Search file contents for a regular expression (ripgrep syntax) in a file or recursively in a directory. ' +
      'Returns matching lines as "path:line_number:text" (context lines as "path-line_number-text"), ' +
      `followed by the number of matches. Lines longer than ${GREP_MAX_LINE_CHARS} characters show the part around the match, ` +
      'with "[... N chars omitted]" on each side. Hidden files, files ignored by .gitignore, and the directories ' +
      '.git, node_modules, __pycache__, .venv and venv are skipped. At most max_matches matches are returned ' +
      `(default 100). Searches stop after ${timeoutSeconds} seconds.`,
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'Regular expression to search for.' },
        path: { type: 'string', description: 'File or directory to search in (default: the working directory).' },
        glob: {
          type: 'string',
          description: 'Only search files whose path matches this glob, e.g. "*.py" (directories only).',
        },
        ignore_case: { type: 'boolean', description: 'Case-insensitive search (default false).' },
        context_lines: { type: 'integer', description: 'Lines of context before and after each match (default 0).' },
        max_matches: { type: 'integer', description: 'Maximum number of matches to return (default 100).' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    annotations: { readOnly: true },
    async handle({ arguments: args }, context) {
      if (!args.pattern) return failure('No pattern provided');
      const backend = backendOf(options.backend, context);
      const path = await resolvePath(backend, context.workingDir, args.path || '.');
      const view = viewOf(options.view, backend, context);
      const refusal = await readPathRefusal(backend, path, view);
      if (refusal !== undefined) return refusal;
      let isDirectory: boolean;
      try {
        isDirectory = (await backend.stat(path)).type === 'directory';
      } catch (error) {
        if (errorCode(error) === 'ENOENT') return failure(`Path not found: ${path}`);
        return failure(`Search failed: ${errorMessage(error)}`);
      }
      const maxMatches = Math.max(1, args.max_matches ?? 100);
      const contextLines = Math.max(0, args.context_lines ?? 0);
      const rg = await resolveRipgrep(backend).catch(() => undefined);
      if (rg === undefined) return failure(RIPGREP_MISSING);
      // JSON records carry each match's offsets, so a long line can be cut around the match.
      const argv = [rg, '--json'];
      if (args.ignore_case) argv.push('--ignore-case');
      if (contextLines > 0) argv.push('--context', String(contextLines));
      if (args.glob && isDirectory) argv.push('--glob', args.glob);
      for (const skip of SKIPPED_DIRECTORY_GLOBS) argv.push('--glob', skip);
      argv.push('--regexp', args.pattern, '--', path);

      const lines: string[] = [];
      let keptBytes = 0;
      let matches = 0;
      let truncated = false;
      let outputCapped = false;
      const supervisor = new ProcessSupervisor({ timeoutMs: timeoutSeconds * 1000, signal: context.signal });
      let previous: { file: string; line: number } | undefined;
      const splitter = new LineSplitter((record, cut) => {
        if (truncated) return;
        const formatted = formatRipgrepRecord(record, cut);
        if (formatted === undefined) return;
        // A file the view does not show (a secret name, rho's home inside the searched directory) is never shown.
        if (!visibleInView(view, resolve(context.workingDir, formatted.file))) return;
        // Text mode's "--" between groups of context that do not touch.
        if (
          contextLines > 0 &&
          previous !== undefined &&
          (formatted.file !== previous.file || formatted.line !== previous.line + 1)
        ) {
          lines.push('--');
          keptBytes += 3;
        }
        previous = { file: formatted.file, line: formatted.line };
        if (formatted.match) {
          if (matches === maxMatches) {
            truncated = true;
            // Enough seen: ripgrep's remaining work would be thrown away.
            supervisor.stop('cancelled');
            return;
          }
          matches += 1;
        }
        lines.push(formatted.text);
        keptBytes += formatted.text.length + 1;
        if (keptBytes > GREP_MAX_OUTPUT_BYTES) {
          truncated = true;
          outputCapped = true;
          supervisor.stop('cancelled');
        }
      }, MAX_RECORD_BYTES);
      const stderr = new OutputCollector(4000, 4000);
      let exit;
      try {
        exit = await runProcess(
          backend,
          {
            argv,
            cwd: context.workingDir,
            stdin: 'ignore',
            // On the local machine ripgrep would inherit rho's environment (API keys, passwords):
            // it gets the restricted shell's allowlist. A container backend's own environment has nothing of rho's.
            ...(backend.isolation === undefined ? { env: scrubEnvironment(process.env) } : {}),
          },
          { onStdout: (chunk) => splitter.push(chunk), onStderr: (chunk) => stderr.push(chunk) },
          supervisor,
        );
      } finally {
        await supervisor.finish();
      }
      if (!truncated) splitter.end();
      if (exit.spawnError) {
        if (exit.spawnError.code === 'ENOENT') return failure(RIPGREP_MISSING);
        return failure(`Search failed: ${exit.spawnError.message}`);
      }
      if (!truncated && supervisor.reason === 'timeout') {
        return failure(`Search timed out after ${timeoutSeconds} seconds`, { matches, truncated: false });
      }
      if (!truncated && supervisor.reason === 'cancelled') return failure('Search cancelled');
      // A trailing context separator says nothing.
      while (lines.at(-1) === '--') lines.pop();
      const errors = stderr.text().trim();
      if (!truncated && exit.exitCode !== 0 && exit.exitCode !== 1 && matches === 0) {
        return failure(`Search failed: ${errors || `ripgrep exited with ${exit.exitCode ?? exit.signal}`}`);
      }
      if (lines.length === 0)
        return { content: 'No matches found', success: true, metadata: { matches: 0, truncated: false } };
      const summary = outputCapped
        ? `[Showing ${matches} matches, truncated: output exceeded ${GREP_MAX_OUTPUT_BYTES / 1024 / 1024} MB]`
        : truncated
          ? `[Showing ${maxMatches} of ${maxMatches + 1}+ matches, truncated]`
          : `[${matches} ${matches === 1 ? 'match' : 'matches'}]`;
      const warning =
        !truncated && exit.exitCode === 2 && errors
          ? `\n[Some files could not be searched: ${errors.split('\n')[0]}]`
          : '';
      return {
        content: `${lines.join('\n')}\n\n${summary}${warning}`,
        success: true,
        metadata: { matches, truncated },
      };
    },
  });
}

/** One match or context line of ripgrep's JSON output, formatted as `path:N:text` / `path-N-text`. */
interface FormattedLine {
  text: string;
  match: boolean;
  file: string;
  line: number;
}

/**
 * Turns one record of `rg --json` into the familiar `path:N:text` (match) or `path-N-text`
 * (context) line, cut around the first match when it is long. Records other than matches and
 * context lines (begin, end, summary) give `undefined`.
 */
function formatRipgrepRecord(record: string, cut: boolean): FormattedLine | undefined {
  if (cut) {
    // Longer than a record is read: the text is not shown, the line still counts.
    const kind = /^\{"type":"(match|context)"/.exec(record)?.[1];
    if (kind === undefined) return undefined;
    const file = /"path":\{"text":"((?:[^"\\]|\\.)*)"/.exec(record)?.[1];
    const name = file === undefined ? '(unknown file)' : (JSON.parse(`"${file}"`) as string);
    const separator = kind === 'match' ? ':' : '-';
    return {
      text: `${name}${separator}?${separator}[line longer than ${MAX_RECORD_BYTES / 1024 / 1024} MB, not shown]`,
      match: kind === 'match',
      file: name,
      line: -1,
    };
  }
  let parsed: RipgrepRecord;
  try {
    parsed = JSON.parse(record) as RipgrepRecord;
  } catch {
    return undefined;
  }
  if (parsed.type !== 'match' && parsed.type !== 'context') return undefined;
  const data = parsed.data;
  const file = textOf(data.path);
  const raw = rawOf(data.lines);
  const bytes =
    raw.byteLength > 0 && raw[raw.byteLength - 1] === 10
      ? raw.subarray(0, raw.byteLength - (raw[raw.byteLength - 2] === 13 ? 2 : 1))
      : raw;
  const text = bytes.toString('utf8');
  const first = data.submatches?.[0];
  // Offsets are in bytes of the line: turned into string indices of the decoded text.
  const focus =
    first === undefined
      ? undefined
      : {
          start: bytes.subarray(0, first.start).toString('utf8').length,
          end: bytes.subarray(0, first.end).toString('utf8').length,
        };
  const match = parsed.type === 'match';
  const separator = match ? ':' : '-';
  const lineNumber = data.line_number ?? 0;
  return {
    text: `${file}${separator}${lineNumber}${separator}${capLine(text, { maxChars: GREP_MAX_LINE_CHARS, ...(focus === undefined ? {} : { focus }) })}`,
    match,
    file,
    line: lineNumber,
  };
}

/** ripgrep's JSON text: UTF-8 as `text`, anything else as base64 `bytes`. */
interface RipgrepText {
  text?: string;
  bytes?: string;
}

interface RipgrepRecord {
  type: string;
  data: {
    path: RipgrepText;
    lines: RipgrepText;
    line_number?: number;
    submatches?: { start: number; end: number }[];
  };
}

function textOf(value: RipgrepText | undefined): string {
  return rawOf(value).toString('utf8');
}

function rawOf(value: RipgrepText | undefined): Buffer {
  if (value?.text !== undefined) return Buffer.from(value.text, 'utf8');
  if (value?.bytes !== undefined) return Buffer.from(value.bytes, 'base64');
  return Buffer.alloc(0);
}
