import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  readSync,
  truncateSync,
  writeSync,
} from 'node:fs';
import { ConfigError, SessionWriteError } from '@rho/core';
import type { RunStatus } from '@rho/core';
import type { SqlAnswerSource } from './sql-answer.js';
import type { SqlDifficulty } from './sql-dataset.js';

/** Format tag of the first line of a results file. */
export const SQL_RESULTS_FORMAT = 'rho-sql-eval/1';

/**
 * How a question ended. `correct`/`incorrect`: the predicted rows were compared with the gold
 * rows. `no_answer`: the agent finished without `submit_sql` and without a fenced sql block.
 * `predicted_error`/`predicted_timeout`: the predicted query failed or ran too long.
 * `gold_error`: the gold query failed (a dataset problem). `agent_error`: the session failed
 * (model API, internal). `agent_timeout`: the question's time ran out before an answer.
 * `limit`: a budget (turns, tokens, cost) ended the session before an answer.
 */
export type SqlResultStatus =
  | 'correct'
  | 'incorrect'
  | 'no_answer'
  | 'predicted_error'
  | 'predicted_timeout'
  | 'gold_error'
  | 'agent_error'
  | 'agent_timeout'
  | 'limit';

/** Every {@link SqlResultStatus}, in report order. */
export const SQL_RESULT_STATUSES: readonly SqlResultStatus[] = [
  'correct',
  'incorrect',
  'no_answer',
  'predicted_error',
  'predicted_timeout',
  'agent_timeout',
  'limit',
  'agent_error',
  'gold_error',
];

/** Token and cost totals. */
export interface SqlEvalUsage {
  /** Input tokens, cached ones included (as OpenAI counts them). */
  input_tokens: number;
  /** Output tokens, reasoning included. */
  output_tokens: number;
  /** Input tokens served from the provider's cache. */
  cached_tokens: number;
  /** Reasoning tokens. */
  reasoning_tokens: number;
  /** Cost in USD of the calls whose model has a known price. */
  cost_usd: number;
}

/** First line of a results file: what the run is. */
export interface SqlRunHeader {
  /** Discriminant. */
  type: 'run';
  /** {@link SQL_RESULTS_FORMAT}. */
  format: string;
  /** Dataset name (`chinook`, or the dataset directory's name). */
  dataset: string;
  /** The questions file that was read. */
  dataset_path: string;
  /** The folder of the databases. */
  databases_dir?: string;
  /** The model the questions were put to. */
  model: string;
  /** When the run was first started (UTC ISO-8601). */
  started_at: string;
  /** The run's `limit` (first N questions), when it had one; a resume keeps it. */
  limit?: number;
  /** The run's difficulty filter, when it had one; a resume keeps it. */
  difficulty?: SqlDifficulty;
}

/** One line per finished question, appended as soon as it finishes. */
export interface SqlQuestionResult {
  /** Discriminant. */
  type: 'result';
  /** The dataset's `question_id`. */
  question_id: string;
  /** The dataset's `db_id`. */
  db_id: string;
  /** `simple`, `moderate`, `challenging` or `unlabelled`. */
  difficulty: string;
  /** The question's text. */
  question: string;
  /** How the question ended. */
  status: SqlResultStatus;
  /** Whether the predicted rows matched the gold rows. */
  correct: boolean;
  /** Why it is not correct (an SQL error, a row difference, a timeout), when it is not. */
  detail?: string;
  /** The evaluated query, or null when there was none. */
  predicted_sql: string | null;
  /** Where the query came from. */
  answer_source: SqlAnswerSource | null;
  /** The dataset's gold query. */
  gold_sql: string;
  /** The question's session: `rho export <id>` turns it into an ATIF trajectory. */
  session_id: string;
  /** Its `trace.jsonl` (on `host` when the question ran on a queue worker). */
  trace_path: string;
  /** The queue worker's host that ran the session (`rho eval sql --queue`); absent for a local run. */
  host?: string;
  /** How the agent's session ended (`timeout` when the question's time ran out). */
  run_status: RunStatus | 'timeout';
  /** Tokens and cost of the session. */
  usage: SqlEvalUsage;
  /** Time spent on the question, agent and evaluation, in milliseconds. */
  duration_ms: number;
  /** When it finished (UTC ISO-8601). */
  finished_at: string;
}

/** What a results file holds. */
export interface SqlResultsContent {
  /** The run line. */
  header: SqlRunHeader;
  /** One per finished question; a question listed twice keeps its last line. */
  results: SqlQuestionResult[];
  /** Byte length of the whole lines; a torn last line (a crash mid-write) lies beyond it. */
  wholeLength: number;
}

/**
 * Reads a results file. A torn last line, left by a crash in the middle of a write, is ignored;
 * any other line that is not a result is an error naming the line.
 */
export function readSqlResults(path: string): SqlResultsContent {
  if (!existsSync(path)) throw new ConfigError({ message: `Results file not found: ${path}.` });
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n');
  const endsWhole = text.endsWith('\n');
  // The last element is '' after a final newline, or the unterminated tail.
  const complete = lines.slice(0, -1);
  const tail = endsWhole ? '' : (lines.at(-1) ?? '');
  let wholeLength = Buffer.byteLength(text) - Buffer.byteLength(tail);
  const records: unknown[] = [];
  complete.forEach((line, index) => {
    if (line.trim() === '') return;
    try {
      records.push(JSON.parse(line));
    } catch {
      throw new ConfigError({
        message: `${path}, line ${index + 1}: not a JSON record. Is this a results file written by rho eval sql?`,
      });
    }
  });
  if (tail.trim() !== '') {
    try {
      records.push(JSON.parse(tail));
      wholeLength = Buffer.byteLength(text);
    } catch {
      // torn by a crash: the question it described is run again
    }
  }
  const [header, ...rest] = records as [SqlRunHeader | undefined, ...SqlQuestionResult[]];
  if (header === undefined || header.type !== 'run' || header.format !== SQL_RESULTS_FORMAT) {
    throw new ConfigError({
      message: `${path} does not start with a '${SQL_RESULTS_FORMAT}' run line: it is not a results file written by rho eval sql.`,
    });
  }
  const byId = new Map<string, SqlQuestionResult>();
  for (const record of rest) {
    if (record.type === 'result' && typeof record.question_id === 'string') byId.set(record.question_id, record);
  }
  return { header, results: [...byId.values()], wholeLength };
}

/** Appends results to a file, one whole line per write, synced so a crash keeps finished questions. */
export interface SqlResultsWriter {
  /** Appends one result as one line and syncs it to disk. */
  append(result: SqlQuestionResult): void;
  /** Closes the file; later appends are ignored. */
  close(): void;
}

/** Creates a new results file with its header; an existing file is never overwritten. */
export function createSqlResultsFile(path: string, header: SqlRunHeader): SqlResultsWriter {
  let descriptor: number;
  try {
    descriptor = openSync(path, 'wx');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST')
      throw new ConfigError({
        message: `${path} already exists. Continue it with --resume ${path}, or choose another --output.`,
      });
    throw new ConfigError({
      message: `Cannot create ${path}: ${(error as Error).message}. Check that its directory exists and is writable.`,
      cause: error,
    });
  }
  return writer(descriptor, path, header);
}

/** Opens an existing results file to append to, cutting a torn last line first. */
export function reopenSqlResultsFile(path: string, wholeLength: number): SqlResultsWriter {
  truncateSync(path, wholeLength);
  const descriptor = openSync(path, 'a+');
  // A last record whole but for its newline (the crash came between the two) gets one first.
  const last = Buffer.alloc(1);
  if (wholeLength > 0 && readSync(descriptor, last, 0, 1, wholeLength - 1) === 1 && last[0] !== 0x0a)
    writeSync(descriptor, '\n');
  return writer(descriptor, path);
}

function writer(descriptor: number, path: string, header?: SqlRunHeader): SqlResultsWriter {
  // One line, whole or not at all: a disk that fills up takes only part of a write (and one
  // `writeSync` ignored that, leaving a torn line the next result was appended to), or fails it.
  // The part written is cut off again, and the failure stops the run with the file's name.
  const write = (record: SqlRunHeader | SqlQuestionResult) => {
    const bytes = Buffer.from(`${JSON.stringify(record)}\n`, 'utf8');
    const start = fstatSync(descriptor).size;
    try {
      let written = 0;
      while (written < bytes.length) written += writeSync(descriptor, bytes, written, bytes.length - written);
      fsyncSync(descriptor);
    } catch (error) {
      try {
        ftruncateSync(descriptor, start);
      } catch {
        // Cannot even cut it: the next --resume cuts a torn last line.
      }
      throw SessionWriteError.from(
        path,
        error,
        'This result was not recorded; free space and continue with --resume (finished questions are kept).',
      );
    }
  };
  if (header !== undefined) {
    try {
      write(header);
    } catch (error) {
      closeSync(descriptor);
      throw error;
    }
  }
  let open = true;
  return {
    append(result) {
      if (open) write(result);
    },
    close() {
      if (!open) return;
      open = false;
      closeSync(descriptor);
    },
  };
}
