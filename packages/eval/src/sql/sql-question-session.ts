import { dirname, join } from 'node:path';
import type {
  Budgets,
  ModelClient,
  ModelClientOptions,
  RunResult,
  RunStatus,
  SecretRedactor,
  SessionOptions,
} from '@rho/core';
import { Agent, SessionStore } from '@rho/core';
import { builtinProfile } from '@rho/permissions';
import { closeDbTools, dbTools, parseDatabaseConfig } from '@rho/tools-db';
import { createSubmitSqlTool } from './sql-answer.js';
import { SQL_EVAL_SYSTEM_PROMPT } from './sql-eval-prompt.js';
import type { SqlEvalUsage } from './sql-results-file.js';

/**
 * How one question's session ended: everything the grading needs, and nothing it does not.
 * Plain JSON, so a session run elsewhere (a `rho worker` on another machine, through the task
 * queue) reports it as it is and the question is graded exactly as a local one.
 */
export interface SqlSessionOutcome {
  /** The session's id. */
  session_id: string;
  /** Its `trace.jsonl` (on the machine that ran it). */
  trace_path: string;
  /** How the session ended; `timeout` when the question's time ran out. */
  run_status: RunStatus | 'timeout';
  /** The final answer's text (a fenced sql block in it is the answer when nothing was submitted). */
  text: string;
  /** The query of the last successful `submit_sql` call. */
  submitted_sql?: string;
  /** What went wrong, for a session that failed. */
  error?: string;
  /** Which budget ended the session, for status `limit`. */
  limit?: string;
  /** Tokens and cost of the session. */
  usage: SqlEvalUsage;
  /** Time the session took, in milliseconds. */
  duration_ms: number;
  /** The host that ran it, when not this process (a queue worker's). */
  host?: string;
}

/** Options of {@link runSqlQuestionSession}. */
export interface SqlQuestionSessionOptions {
  /** The question's id (for the caller's records). */
  questionId: string;
  /** The database's name, as the `sqlite` tool offers it. */
  dbId: string;
  /** The SQLite file of the database. */
  databasePath: string;
  /** The task text (see `sqlQuestionPrompt`). */
  prompt: string;
  /** The model name. */
  model: string;
  /** How to reach an OpenAI-compatible endpoint. */
  clientOptions?: Omit<ModelClientOptions, 'model'>;
  /** A model client instead (tests, in-process engines); wins over `clientOptions`. */
  createClient?: () => ModelClient;
  /** The system prompt; default {@link SQL_EVAL_SYSTEM_PROMPT}. */
  systemPrompt?: string;
  /** Budgets of the session (default: at most 20 model calls). */
  budgets?: Budgets;
  /** Time for the session, in milliseconds (default 300 000). */
  questionTimeoutMs?: number;
  /** Time for one query of the agent's `sqlite` tool, in milliseconds (default 30 000). */
  queryTimeoutMs?: number;
  /** Where the session directory goes. */
  sessionsDir: string;
  /** Aborting cancels the session; the result is then `undefined` (not recorded). */
  signal?: AbortSignal;
  /** The queued task the session carries out, recorded in its `run_start`. */
  task?: { id: string; attempt: number };
  /** More options of the session (a fleet link's control channel and trace mirror). */
  sessionOptions?: (session: { id: string; directory: string; workingDir: string }) => SessionOptions;
  /** Learns the session id as soon as the session exists. */
  onSession?: (sessionId: string) => void;
  /** Secrets the model and the trace must not see (the CLI's redactor of every secret it knows). */
  redactor?: SecretRedactor;
}

/**
 * Runs one text-to-SQL question as a session: profile `readonly`, the `sqlite` tool on that
 * question's database alone, and `submit_sql`; its own time limit and budgets; unattended. The
 * same function runs a question in `rho eval sql` and on a queue worker (`rho eval sql --queue`).
 * Returns `undefined` when `signal` stopped it (not when its own time ran out).
 */
export async function runSqlQuestionSession(
  options: SqlQuestionSessionOptions,
): Promise<SqlSessionOutcome | undefined> {
  const started = Date.now();
  const queryTimeoutMs = options.queryTimeoutMs ?? 30_000;
  const questionTimeoutMs = options.questionTimeoutMs ?? 300_000;
  const profile = builtinProfile('readonly')!;
  const workingDir = dirname(options.databasePath);
  const systemPrompt = options.systemPrompt ?? SQL_EVAL_SYSTEM_PROMPT;
  const budgets = options.budgets ?? { maxTurns: 20 };
  const databaseEntry = {
    type: 'sqlite',
    path: options.databasePath,
    statement_timeout: Math.max(1, Math.ceil(queryTimeoutMs / 1000)),
  };
  const store = new SessionStore(options.sessionsDir);
  const { id, directory } = store.create({
    config: {
      model: options.model,
      profile: profile.name,
      working_dir: workingDir,
      system_prompt: systemPrompt,
      databases: { [options.dbId]: databaseEntry },
      budgets: budgetDocument(budgets),
    },
    model: options.model,
    profile: profile.name,
    workingDir,
  });
  options.onSession?.(id);
  const submit = createSubmitSqlTool();
  const tools = dbTools({ profile, databases: parseDatabaseConfig({ [options.dbId]: databaseEntry }), workingDir });
  const agent = new Agent({
    systemPrompt,
    model: options.model,
    tools: [...tools, submit.tool],
    workingDir,
    budgets,
    // Unattended, as the original ran BIRD with auto-approve: nobody is there to answer, and the
    // tools are read-only by construction (the database tool runs every statement in a
    // read-only connection under the readonly profile; submit_sql only records).
    approvalPolicy: () => false,
    ...(options.redactor === undefined ? {} : { redactor: options.redactor }),
    ...(options.createClient === undefined ? {} : { client: options.createClient }),
    ...(options.clientOptions === undefined ? {} : { clientOptions: options.clientOptions }),
  });
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, questionTimeoutMs);
  const stop = () => controller.abort();
  options.signal?.addEventListener('abort', stop, { once: true });
  let run: RunResult | undefined;
  let failure: string | undefined;
  try {
    // Should a tool still ask for approval of its own, the unattended run grants it.
    run = await agent
      .createSession({
        id,
        directory,
        approver: () => true,
        ...(options.sessionOptions?.({ id, directory, workingDir }) ?? {}),
      })
      .run(options.prompt, {
        signal: controller.signal,
        ...(options.task === undefined ? {} : { task: options.task }),
      });
  } catch (error) {
    failure = error instanceof Error ? error.message : String(error);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', stop);
    await closeDbTools(tools);
  }
  if (options.signal?.aborted === true && !timedOut) return undefined;
  const usage = run?.usage ?? { input_tokens: 0, output_tokens: 0, cached_tokens: 0, reasoning_tokens: 0, cost_usd: 0 };
  const runStatus = timedOut ? 'timeout' : (run?.status ?? 'error');
  const error = failure ?? (run?.status === 'error' ? run.error?.message : undefined);
  const submitted = submit.submitted();
  return {
    session_id: id,
    trace_path: join(directory, 'trace.jsonl'),
    run_status: runStatus,
    text: run?.text ?? '',
    ...(submitted === undefined ? {} : { submitted_sql: submitted }),
    ...(error === undefined ? {} : { error }),
    ...(run?.limit === undefined ? {} : { limit: run.limit }),
    usage: {
      input_tokens: usage.input_tokens,
      output_tokens: usage.output_tokens,
      cached_tokens: usage.cached_tokens,
      reasoning_tokens: usage.reasoning_tokens,
      cost_usd: usage.cost_usd,
    },
    duration_ms: Date.now() - started,
  };
}

function budgetDocument(budgets: Budgets): Record<string, number> {
  const entries = Object.entries({
    max_turns: budgets.maxTurns,
    max_tokens: budgets.maxTokens,
    max_cost_usd: budgets.maxCostUsd,
    max_duration_ms: budgets.maxDurationMs,
  });
  return Object.fromEntries(entries.filter((entry): entry is [string, number] => entry[1] !== undefined));
}
