// Messages between the sqlite tool and the process that runs its statements (sqlite-child.ts).
// They travel over Node's IPC channel with `serialization: 'advanced'` (structured clone), so
// bigint and binary cells arrive as they left.
import type { SqliteEngineName } from './sqlite-engine.js';

/** What the tool asks of the SQLite process; one request at a time, each answered once. */
export type ParentRequest =
  | { op: 'open'; path: string; readonly: boolean; fileMustExist: boolean; timeoutMs: number }
  | { op: 'run'; sql: string; params: unknown[]; readonly: boolean }
  /** The next batch of the statement whose last reply was `rows`. */
  | { op: 'more' }
  | { op: 'ping' }
  | { op: 'close' };

/** What the SQLite process answers. */
export type ChildReply =
  | { type: 'opened'; engine: SqliteEngineName }
  /** A full batch: more rows may follow (ask with `more`). Columns come with the first batch. */
  | { type: 'rows'; columns?: string[]; rows: unknown[][] }
  /** The statement ended: the last rows (possibly none) and its outcome. */
  | { type: 'done'; hasResultSet: boolean; columns?: string[]; rows?: unknown[][]; affectedRows?: number }
  | { type: 'pong' }
  | { type: 'error'; name: string; message: string; code?: string };
