import { defineTool } from '@rho/core';
import { LineSplitter } from './internal/line-splitter.js';
import { OutputCollector } from './internal/output-collector.js';
import { backendOf, errorCode, errorMessage, resolvePath } from './internal/paths.js';
import { failure } from './internal/result.js';
import { RIPGREP_MISSING, SKIPPED_DIRECTORY_GLOBS, resolveRipgrep } from './internal/ripgrep.js';
import { runProcess } from './internal/run-process.js';
import { ProcessSupervisor } from './internal/supervisor.js';
import type { FsToolOptions } from './read-tool.js';

/** Options of the ripgrep-based tools. */
export interface SearchToolOptions extends FsToolOptions {
  /** Seconds a search may run (default {@link SEARCH_TIMEOUT_SECONDS}). */
  timeoutSeconds?: number;
}

/** Seconds a search may run. */
export const SEARCH_TIMEOUT_SECONDS = 30;
/** Bytes kept of one output line (minified files have enormous lines). */
const MAX_OUTPUT_LINE_BYTES = 2000;
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
      'followed by the number of matches. Hidden files, files ignored by .gitignore, and the directories ' +
      '.git, node_modules, __pycache__, .venv and venv are skipped. At most max_matches matches are returned ' +
      `(default 100). Searches stop after ${timeoutSeconds} seconds.`,
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'Regular expression to search for.' },
        path: { type: 'string', description: 'File or directory to search in.' },
        glob: {
          type: 'string',
          description: 'Only search files whose path matches this glob, e.g. "*.py" (directories only).',
        },
        ignore_case: { type: 'boolean', description: 'Case-insensitive search (default false).' },
        context_lines: { type: 'integer', description: 'Lines of context before and after each match (default 0).' },
        max_matches: { type: 'integer', description: 'Maximum number of matches to return (default 100).' },
      },
      required: ['pattern', 'path'],
      additionalProperties: false,
    },
    annotations: { readOnly: true },
    async handle({ arguments: args }, context) {
      if (!args.pattern) return failure('No pattern provided');
      if (!args.path) return failure('No path provided');
      const backend = backendOf(options.backend, context);
      const path = await resolvePath(backend, context.workingDir, args.path);
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
      const argv = [rg, '--line-number', '--with-filename', '--no-heading', '--color=never', '--null'];
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
      const splitter = new LineSplitter((line, cut) => {
        if (truncated) return;
        const formatted = formatRipgrepLine(line, cut);
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
      }, MAX_OUTPUT_LINE_BYTES);
      const stderr = new OutputCollector(4000, 4000);
      let exit;
      try {
        exit = await runProcess(
          backend,
          { argv, cwd: context.workingDir, stdin: 'ignore' },
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
      if (lines.length === 0) return { content: 'No matches found', success: true, metadata: { matches: 0, truncated: false } };
      const summary = outputCapped
        ? `[Showing ${matches} matches, truncated: output exceeded ${GREP_MAX_OUTPUT_BYTES / 1024 / 1024} MB]`
        : truncated
        ? `[Showing ${maxMatches} of ${maxMatches + 1}+ matches, truncated]`
        : `[${matches} ${matches === 1 ? 'match' : 'matches'}]`;
      const warning =
        !truncated && exit.exitCode === 2 && errors ? `\n[Some files could not be searched: ${errors.split('\n')[0]}]` : '';
      return {
        content: `${lines.join('\n')}\n\n${summary}${warning}`,
        success: true,
        metadata: { matches, truncated },
      };
    },
  });
}

/**
 * Turns one line of `rg --null` output into the familiar `path:N:text` / `path-N-text` form.
 * The NUL after the file name tells matches from context lines exactly, whatever characters the
 * file name or the text contain (the original guessed from `:` and `-`).
 */
function formatRipgrepLine(line: string, cut: boolean): { text: string; match: boolean } {
  const separator = line.indexOf('\0');
  if (separator === -1) return { text: line, match: false };
  const file = line.slice(0, separator);
  const rest = line.slice(separator + 1);
  const parsed = /^(\d+)([:-])/.exec(rest);
  const suffix = cut ? '...' : '';
  if (parsed === null) return { text: `${file}:${rest}${suffix}`, match: true };
  const [prefix, lineNumber, kind] = parsed;
  const text = rest.slice(prefix.length);
  return { text: `${file}${kind}${lineNumber}${kind}${text}${suffix}`, match: kind === ':' };
}
