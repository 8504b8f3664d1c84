import { dirname } from 'node:path';
import { defineTool, type ExecutionBackend, type FileInfo } from '@rho/core';
import { backendOf, errorCode, errorMessage, resolvePath } from './internal/paths.js';
import { failure } from './internal/result.js';
import type { WriteTarget } from '@rho/permissions';
import type { WritePathCheck } from './write-path-check.js';

/** Options of {@link createWriteTool}. */
export interface WriteToolOptions {
  /** Backend to run on; defaults to the session's. */
  backend?: ExecutionBackend;
  /** `create-only` never replaces an existing file (exclusive create); `full` may. */
  mode: 'create-only' | 'full';
  /** The path policy every write goes through. */
  checkPath: WritePathCheck;
}

/** `write`: creates a file (or, in `full` mode, replaces one atomically). */
export function createWriteTool(options: WriteToolOptions) {
  const createOnly = options.mode === 'create-only';
  return defineTool({
    name: 'write',
    description: createOnly
      ? 'Create a new file with the given content; missing parent directories are created. ' +
        'Existing files are never overwritten: choose a new path. Writes to sensitive locations are refused.'
      : 'Write a file with the given content, creating it (and missing parent directories) or replacing it ' +
        'entirely. The write is atomic. To change part of a file, use edit instead.',
    parameters: {
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Path of the file to write.' },
        content: { type: 'string', description: 'The complete content of the file.' },
      },
      required: ['path', 'content'],
      additionalProperties: false,
    },
    // A create-only write only adds files; a full one may replace them.
    annotations: { destructive: !createOnly },
    async handle({ arguments: args }, context) {
      if (!args.path) return failure('No path provided');
      if (typeof args.content !== 'string') return failure('No content provided');
      const backend = backendOf(options.backend, context);
      const path = await resolvePath(backend, context.workingDir, args.path);
      let target: string;
      let openTarget: ((options: { createParents: boolean }) => Promise<WriteTarget>) | undefined;
      try {
        const decision = await options.checkPath(path, context.workingDir, 'write', backend);
        if (!decision.allowed)
          return failure(decision.reason, decision.rule === undefined ? { path } : { path, rule: decision.rule });
        target = decision.realPath;
        // On this machine, write relative to the directory the decision named, opened without
        // following links: nothing resolves the path a second time.
        if (backend.name === 'local') openTarget = decision.open;
      } catch (error) {
        return failure(`Error writing file: ${errorMessage(error)}`);
      }
      const alreadyExists = `File already exists: ${path}. Use a different path or delete the existing file first.`;
      const data = Buffer.from(args.content, 'utf8');
      const writeError = (error: unknown) => {
        const code = errorCode(error);
        if (code === 'EEXIST') return failure(alreadyExists);
        if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return failure(`Permission denied: ${path}`);
        return failure(`Error writing file: ${errorMessage(error)}`);
      };
      let overwrote: boolean;
      if (openTarget !== undefined) {
        let handle: WriteTarget;
        try {
          handle = await openTarget({ createParents: true });
        } catch (error) {
          if (errorCode(error) === 'ECHANGED') return failure(`Error writing file: ${errorMessage(error)}`);
          return failure(`Error writing file: cannot create the directory ${dirname(target)}: ${errorMessage(error)}`);
        }
        try {
          const existing = await handle.stat();
          if (existing?.isDirectory() === true) return failure(`Error writing file: ${path} is a directory`);
          if (createOnly && existing !== undefined) return failure(alreadyExists);
          overwrote = existing !== undefined;
          if (createOnly) await handle.createExclusive(data);
          else await handle.replace(data);
        } catch (error) {
          return writeError(error);
        } finally {
          handle.close();
        }
      } else {
        let existing: FileInfo | undefined;
        try {
          existing = await backend.stat(target);
        } catch {
          existing = undefined;
        }
        if (existing?.type === 'directory') return failure(`Error writing file: ${path} is a directory`);
        if (createOnly && existing !== undefined) return failure(alreadyExists);
        overwrote = existing !== undefined;
        try {
          await backend.mkdir(dirname(target), { recursive: true });
        } catch (error) {
          return failure(`Error writing file: cannot create the directory ${dirname(target)}: ${errorMessage(error)}`);
        }
        try {
          if (createOnly) await backend.createExclusive(target, data);
          else await backend.writeFileAtomic(target, data);
        } catch (error) {
          return writeError(error);
        }
      }
      const lines = countLines(args.content);
      return {
        content: `${overwrote ? 'Overwrote' : 'Created'} ${path} (${data.byteLength} bytes, ${lines} lines)`,
        success: true,
        metadata: { path, size_bytes: data.byteLength, lines, overwrote },
      };
    },
  });
}

/** Lines as the original counts them: newlines, plus one for a last line without newline. */
function countLines(content: string): number {
  if (content === '') return 0;
  let count = 0;
  for (let index = content.indexOf('\n'); index !== -1; index = content.indexOf('\n', index + 1)) count += 1;
  return content.endsWith('\n') ? count : count + 1;
}
