import { resolve } from 'node:path';
import { defineTool } from '@rho/core';
import { readPathRefusal, viewOf } from './internal/read-path.js';
import { LineSplitter } from './internal/line-splitter.js';
import { OutputCollector } from './internal/output-collector.js';
import { backendOf, errorCode, errorMessage, resolvePath } from './internal/paths.js';
import { failure } from './internal/result.js';
import { RIPGREP_MISSING, SKIPPED_DIRECTORY_GLOBS, resolveRipgrep } from './internal/ripgrep.js';
import { runProcess } from './internal/run-process.js';
import { ProcessSupervisor } from './internal/supervisor.js';
import { SEARCH_TIMEOUT_SECONDS, type SearchToolOptions } from './grep-tool.js';

/** Most paths one call returns, whatever `max_results` says. */
export const GLOB_MAX_RESULTS = 10_000;

/**
 * `glob`: lists files whose path matches a glob, with ripgrep's `--files` (sorted by path).
 * Paths are relative to the searched directory.
 */
export function createGlobTool(options: SearchToolOptions = {}) {
  const timeoutSeconds = options.timeoutSeconds ?? SEARCH_TIMEOUT_SECONDS;
  return defineTool({
    name: 'glob',
    description:
      'Find files by name pattern under a directory, e.g. "*.py" (matches at any depth) or "src/**/*.ts". ' +
      'Returns paths relative to the directory, sorted, at most max_results (default 100), followed by the ' +
      'total count. The directories .git, node_modules, __pycache__, .venv and venv are skipped.',
    parameters: {
      type: 'object',
      properties: {
        pattern: { type: 'string', description: 'Glob pattern to match file paths against.' },
        path: { type: 'string', description: 'Directory to search in (default: the working directory).' },
        max_results: { type: 'integer', description: 'Maximum number of paths to return (default 100).' },
      },
      required: ['pattern'],
      additionalProperties: false,
    },
    annotations: { readOnly: true },
    async handle({ arguments: args }, context) {
      if (!args.pattern) return failure('No pattern provided');
      const backend = backendOf(options.backend, context);
      const root = await resolvePath(backend, context.workingDir, args.path || '.');
      const view = viewOf(options.view, backend, context);
      const refusal = await readPathRefusal(backend, root, view);
      if (refusal !== undefined) return refusal;
      try {
        if ((await backend.stat(root)).type !== 'directory') return failure(`Not a directory: ${root}`);
      } catch (error) {
        if (errorCode(error) === 'ENOENT') return failure(`Directory not found: ${root}`);
        return failure(`Error finding files: ${errorMessage(error)}`);
      }
      const maxResults = Math.min(Math.max(1, args.max_results ?? 100), GLOB_MAX_RESULTS);
      const rg = await resolveRipgrep(backend).catch(() => undefined);
      if (rg === undefined) return failure(RIPGREP_MISSING);
      const argv = [rg, '--files', '--sort=path', '--color=never', '--glob', args.pattern];
      for (const skip of SKIPPED_DIRECTORY_GLOBS) argv.push('--glob', skip);

      const files: string[] = [];
      let total = 0;
      const splitter = new LineSplitter((line) => {
        // A directory hidden from the session (rho's home inside the working directory) is not listed.
        if (view?.hiddenBy(resolve(root, line)) !== undefined) return;
        total += 1;
        if (files.length < maxResults) files.push(line);
      }, 4096);
      const stderr = new OutputCollector(4000, 4000);
      const supervisor = new ProcessSupervisor({ timeoutMs: timeoutSeconds * 1000, signal: context.signal });
      let exit;
      try {
        // Run inside the root so ripgrep prints paths relative to it.
        exit = await runProcess(
          backend,
          { argv, cwd: root, stdin: 'ignore' },
          { onStdout: (chunk) => splitter.push(chunk), onStderr: (chunk) => stderr.push(chunk) },
          supervisor,
        );
      } finally {
        await supervisor.finish();
      }
      splitter.end();
      if (exit.spawnError) {
        if (exit.spawnError.code === 'ENOENT') return failure(RIPGREP_MISSING);
        return failure(`Error finding files: ${exit.spawnError.message}`);
      }
      if (supervisor.reason === 'timeout') return failure(`File search timed out after ${timeoutSeconds} seconds`);
      if (supervisor.reason === 'cancelled') return failure('File search cancelled');
      const errors = stderr.text().trim();
      if (exit.exitCode !== 0 && exit.exitCode !== 1 && total === 0) {
        return failure(`Find failed: ${errors || `ripgrep exited with ${exit.exitCode ?? exit.signal}`}`);
      }
      if (total === 0)
        return { content: 'No files found matching pattern', success: true, metadata: { matches: 0, total: 0 } };
      const footer = total > files.length ? `[Showing ${files.length} of ${total} files]` : `[${total} files found]`;
      return {
        content: `${files.join('\n')}\n\n${footer}`,
        success: true,
        metadata: { matches: files.length, total },
      };
    },
  });
}
