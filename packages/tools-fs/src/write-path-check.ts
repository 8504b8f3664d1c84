import type { ExecutionBackend } from '@rho/core';
import type { WriteTarget } from '@rho/permissions';

/**
 * Decides whether a resolved absolute path may be written by `writer` (`write` or `edit`), and
 * where the write really lands (symlinks and `..` resolved). A refusal's `reason` is shown to the
 * model as it is, so it must say what to do instead. `fsTools` wires `checkWritePath` of
 * `@rho/permissions` here, with `open` set to `openWriteTarget`: when the tool runs on the local
 * backend, it then reads and writes through that handle, relative to the parent directory opened
 * once without following links, instead of resolving the path again. `backend` is the backend
 * the tool writes on: one that is not local is decided on its own file system (and written there).
 */
export type WritePathCheck = (
  path: string,
  workingDir: string,
  writer?: 'write' | 'edit',
  backend?: ExecutionBackend,
) => Promise<
  | { allowed: true; realPath: string; open?: (options: { createParents: boolean }) => Promise<WriteTarget> }
  | { allowed: false; reason: string; rule?: string }
>;
