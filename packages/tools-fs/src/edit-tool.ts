import { defineTool, type ExecutionBackend } from '@rho/core';
import { applyEdit } from './internal/edit-match.js';
import { backendOf, errorCode, errorMessage, resolvePath } from './internal/paths.js';
import { failure } from './internal/result.js';
import type { WriteTarget } from '@rho/permissions';
import type { WritePathCheck } from './write-path-check.js';

/** Largest file `edit` loads. */
export const EDIT_MAX_BYTES = 50 * 1024 * 1024;

/** Options of {@link createEditTool}. */
export interface EditToolOptions {
  /** Backend to run on; defaults to the session's. */
  backend?: ExecutionBackend;
  /** The path policy edits go through, if any. */
  checkPath?: WritePathCheck;
}

/**
 * `edit`: replaces one unique occurrence of a text in a file. Tries an exact match, then a match
 * ignoring trailing whitespace, then one ignoring indentation (re-indenting the replacement).
 * The file is replaced atomically, and left untouched when anything fails.
 */
export function createEditTool(options: EditToolOptions = {}) {
  return defineTool({
    name: 'edit',
    description:
      'Replace text in a file: old_string must occur exactly once (include enough surrounding lines to make it ' +
      'unique) and is replaced by new_string (empty new_string deletes it). If there is no exact match, a match ' +
      'ignoring trailing whitespace, then one ignoring indentation is tried; with the latter, new_string is ' +
      're-indented to the matched block. The file is left unchanged when the edit fails.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Path of the file to edit.' },
        old_string: { type: 'string', description: 'The exact text to replace, unique in the file.' },
        new_string: { type: 'string', description: 'The replacement text.' },
      },
      required: ['path', 'old_string', 'new_string'],
      additionalProperties: false,
    },
    annotations: { destructive: true },
    async handle({ arguments: args }, context) {
      if (!args.path) return failure('No path provided');
      if (!args.old_string) return failure('No old_string provided');
      const backend = backendOf(options.backend, context);
      const path = await resolvePath(backend, context.workingDir, args.path);
      let target = path;
      let openTarget: ((options: { createParents: boolean }) => Promise<WriteTarget>) | undefined;
      try {
        // The policy first, so the tool refuses exactly what `rho policy check --via edit` refuses.
        if (options.checkPath) {
          const decision = await options.checkPath(path, context.workingDir, 'edit', backend);
          if (!decision.allowed)
            return failure(decision.reason, decision.rule === undefined ? { path } : { path, rule: decision.rule });
          target = decision.realPath;
          if (backend.name === 'local') openTarget = decision.open;
        }
        const info = await backend.stat(path);
        if (info.type !== 'file') return failure(`Not a file: ${path}`);
      } catch (error) {
        const code = errorCode(error);
        if (code === 'ENOENT') return failure(`File not found: ${path}`);
        if (code === 'ENOTDIR') return failure(`Not a file: ${path}`);
        return failure(`Error reading file: ${errorMessage(error)}`);
      }
      // On this machine, read and replace relative to the directory the decision named, opened
      // without following links, so the file read is the file replaced and nothing is redirected.
      let handle: WriteTarget | undefined;
      if (openTarget !== undefined) {
        try {
          handle = await openTarget({ createParents: false });
        } catch (error) {
          return failure(`Error reading file: ${errorMessage(error)}`);
        }
      }
      try {
        let text: string;
        try {
          const bytes =
            handle !== undefined
              ? await handle.read(EDIT_MAX_BYTES)
              : await backend.readFile(target, { maxBytes: EDIT_MAX_BYTES });
          text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
        } catch (error) {
          const code = errorCode(error);
          if (code === 'EACCES' || code === 'EPERM') return failure(`Permission denied: ${path}`);
          if (code === 'EFBIG')
            return failure(`Error reading file: ${path} is larger than ${EDIT_MAX_BYTES / 1024 / 1024} MB`);
          if (error instanceof TypeError) return failure(`Error reading file: ${path} is not valid UTF-8 text`);
          return failure(`Error reading file: ${errorMessage(error)}`);
        }
        const outcome = applyEdit(text, args.old_string, args.new_string ?? '');
        if (!outcome.ok) return failure(outcome.message, { path });
        try {
          const data = Buffer.from(outcome.text, 'utf8');
          if (handle !== undefined) await handle.replace(data);
          else await backend.writeFileAtomic(target, data);
        } catch (error) {
          const code = errorCode(error);
          if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return failure(`Permission denied: ${path}`);
          return failure(`Error writing file: ${errorMessage(error)}`);
        }
        return {
          content: `Edited ${path}: ${outcome.strategy}`,
          success: true,
          metadata: { path, strategy: outcome.strategy },
        };
      } finally {
        handle?.close();
      }
    },
  });
}
