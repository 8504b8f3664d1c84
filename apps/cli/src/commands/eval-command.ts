import type { Argv } from 'yargs';
import type { Terminal } from '../terminal.js';

/** Arguments of `rho eval sql`. */
export interface EvalSqlArguments {
  dataset?: string;
  dbDir?: string;
  limit?: number;
  difficulty?: 'simple' | 'moderate' | 'challenging';
  concurrency: number;
  output?: string;
  resume?: string;
  compare?: string[];
  json: boolean;
  evidence: boolean;
  model?: string;
  baseUrl?: string;
  reasoningEffort?: string;
  systemPrompt?: string;
  maxTurns: number;
  maxTokens?: number;
  maxCost?: number;
  questionTimeout: number;
  queryTimeout: number;
  firstByteTimeout?: number;
  idleTimeout?: number;
  maxRetries?: number;
  queue: boolean;
  label?: string[];
  priority?: number;
  workerDbDir?: string;
  fleet?: string;
  queueSchema?: string;
}

/**
 * Registers `rho eval sql`: BIRD-style text-to-SQL execution accuracy over the bundled Chinook
 * set or a BIRD-layout dataset, resumable, with a report and `--compare`. `@rho/eval` is loaded
 * only when the command runs, so `rho --help` stays fast.
 */
export function registerEvalCommands(
  parser: Argv,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
  setExit: (code: number) => void,
): Argv {
  return parser.command('eval', 'Measure an agent on a benchmark (rho eval sql)', (evaluation) =>
    evaluation
      .command(
        'sql',
        'Text-to-SQL execution accuracy, BIRD-style: each question is a readonly session with the database tool; its final query is run and compared with the gold query (exit 0 when the run completes, whatever the accuracy)',
        (command) =>
          command
            .option('dataset', {
              type: 'string',
              describe:
                "chinook (bundled, 64 questions), a directory in BIRD's dev layout (dev.json, dev_databases/), or a questions JSON file",
            })
            .option('db-dir', {
              type: 'string',
              describe: 'Folder of <db_id>/<db_id>.sqlite (default: dev_databases next to the questions)',
            })
            .option('limit', { alias: 'n', type: 'number', describe: 'Only the first N questions' })
            .option('difficulty', {
              type: 'string',
              choices: ['simple', 'moderate', 'challenging'],
              describe: 'Only questions of this difficulty (before --limit)',
            })
            .option('concurrency', { alias: 'j', type: 'number', default: 4, describe: 'Questions in flight at once' })
            .option('output', {
              alias: 'o',
              type: 'string',
              describe:
                'Results JSONL to create, one line per finished question (default: $RHO_HOME/evals/sql-<dataset>-<time>.jsonl); the report goes next to it as .report.json',
            })
            .option('resume', {
              type: 'string',
              describe: 'Continue the run of this results JSONL: finished questions are not run again',
            })
            // Counted here rather than with yargs' nargs, whose error would not be a usage error (exit 2).
            .option('compare', {
              type: 'string',
              array: true,
              describe:
                'Compare two runs, A B (each a report JSON or a results JSONL): per-question flips and accuracy deltas',
            })
            .option('json', {
              type: 'boolean',
              default: false,
              describe: 'Print progress events as JSON lines on stdout, the last one with the report',
            })
            .option('evidence', {
              type: 'boolean',
              default: true,
              describe: 'Give each question its evidence (hint); --no-evidence leaves it out',
            })
            .option('model', {
              alias: 'm',
              type: 'string',
              describe: 'Model name (default: $OPENAI_MODEL or gpt-5-mini)',
            })
            .option('base-url', { type: 'string', describe: 'OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)' })
            .option('reasoning-effort', {
              type: 'string',
              describe: 'Reasoning effort for reasoning models (low, medium, high)',
            })
            .option('system-prompt', {
              alias: 's',
              type: 'string',
              describe: 'A text file to use as the system prompt instead of the built-in one',
            })
            .option('max-turns', { type: 'number', default: 20, describe: 'Model calls per question' })
            .option('max-tokens', { type: 'number', describe: 'Tokens per question' })
            .option('max-cost', { type: 'number', describe: 'USD per question' })
            .option('question-timeout', {
              type: 'number',
              default: 300,
              describe: "Seconds for one question's session",
            })
            .option('query-timeout', {
              type: 'number',
              default: 30,
              describe: 'Seconds for one evaluation query (predicted or gold)',
            })
            .option('first-byte-timeout', {
              type: 'number',
              describe: 'Seconds to wait for a model answer to start (default: $RHO_FIRST_BYTE_TIMEOUT or 60)',
            })
            .option('idle-timeout', {
              type: 'number',
              describe: 'Seconds to wait between two chunks of a streamed answer (default: $RHO_IDLE_TIMEOUT or 60)',
            })
            .option('max-retries', {
              type: 'number',
              describe: 'Retries of a failed model request (default: $RHO_MAX_RETRIES or 8)',
            })
            .option('queue', {
              type: 'boolean',
              default: false,
              describe:
                "Spread the questions over the task queue's workers (rho worker on any node): each question is a task labelled eval; graded here as a local run is",
            })
            .option('label', {
              alias: 'l',
              type: 'string',
              requiresArg: true,
              describe:
                'With --queue: more labels for the tasks (repeatable or comma-separated), to route them to workers',
            })
            .option('priority', { type: 'number', describe: 'With --queue: priority of the tasks (higher first)' })
            .option('worker-db-dir', {
              type: 'string',
              describe:
                "With --queue: the databases folder on the workers (default: the same path as here; a bundled dataset: the workers' own copy)",
            })
            .option('queue-schema', {
              type: 'string',
              describe: "With --queue: the queue's schema (default: $RHO_QUEUE_SCHEMA or rho_queue)",
            }),
        async (argv) => {
          const labels =
            argv.label === undefined
              ? undefined
              : ([] as unknown[])
                  .concat(argv.label)
                  .flatMap((item) => String(item).split(','))
                  .map((item) => item.trim())
                  .filter((item) => item !== '');
          setExit(
            await evalSqlCommand(
              { ...(argv as unknown as EvalSqlArguments), ...(labels === undefined ? {} : { label: labels }) },
              terminal,
              env,
            ),
          );
        },
      )
      .command(
        'sql-task',
        false,
        (command) => command.option('task', { type: 'string', demandOption: true }),
        async (argv) => {
          const { sqlTaskCommand } = await import('./eval-queue.js');
          setExit(await sqlTaskCommand({ task: String(argv.task) }, terminal, env));
        },
      )
      .demandCommand(1, 'Use: rho eval sql --dataset chinook|PATH'),
  );
}

/** Runs `rho eval sql`; returns the exit code (0 completed, 1 every question failed in its session, 2 bad input, 130 interrupted). */
export async function evalSqlCommand(
  argv: EvalSqlArguments,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const { existsSync, mkdirSync, readFileSync, writeFileSync } = await import('node:fs');
  const { dirname, join, resolve } = await import('node:path');
  const { rhoHome } = await import('@rho/core');
  const evaluation = await import('@rho/eval');
  const { UsageError } = await import('../exit-codes.js');
  const { loadDotenv } = await import('../dotenv.js');
  const { styles } = await import('../terminal.js');

  if (argv.compare !== undefined) {
    if (argv.compare.length !== 2)
      throw new UsageError({
        message: '--compare takes two runs: rho eval sql --compare A B (each a report JSON or a results JSONL).',
      });
    const [before, after] = argv.compare.map((path) => evaluation.loadSqlEvalReport(resolve(path)));
    const comparison = evaluation.compareSqlEvalReports(before!, after!);
    terminal.stdout.write(
      argv.json ? `${JSON.stringify(comparison, null, 2)}\n` : evaluation.formatSqlEvalComparison(comparison),
    );
    return 0;
  }

  loadDotenv(env);
  const positive = (value: number | undefined, flag: string, whole = false): number | undefined => {
    if (value === undefined) return undefined;
    if (!Number.isFinite(value) || value <= 0 || (whole && !Number.isInteger(value)))
      throw new UsageError({ message: `${flag} must be a positive ${whole ? 'whole ' : ''}number (got ${value}).` });
    return value;
  };
  const limit = positive(argv.limit, '--limit', true);
  const concurrency = positive(argv.concurrency, '--concurrency', true)!;
  const resumePath = argv.resume === undefined ? undefined : resolve(argv.resume);
  const header = resumePath === undefined ? undefined : evaluation.readSqlResults(resumePath).header;
  // A resumed run keeps its dataset and model unless they are given again (and then they must match).
  const datasetSource =
    argv.dataset ?? (header === undefined ? undefined : header.dataset === 'chinook' ? 'chinook' : header.dataset_path);
  if (datasetSource === undefined || datasetSource.trim() === '')
    throw new UsageError({
      message:
        'Missing --dataset: pass chinook (bundled), a BIRD-layout directory (dev.json and dev_databases/), or a questions JSON file.',
    });
  const databasesDir =
    argv.dbDir === undefined ? (argv.dataset === undefined ? header?.databases_dir : undefined) : resolve(argv.dbDir);
  const dataset = evaluation.loadSqlDataset(datasetSource, databasesDir === undefined ? {} : { databasesDir });
  if (dataset.questions.length === 0) throw new UsageError({ message: `${dataset.path} has no questions.` });

  // The model client's settings section, as a run resolves it: flags, else the resumed run's model,
  // else the environment.
  const [{ modelSettingsSection, resolveSettings }, { configSource }, { allSections, settingsOverrides }] =
    await Promise.all([import('@rho/core/settings'), import('@rho/core/internal'), import('../settings.js')]);
  const resolvedModel = await resolveSettings({
    sections: [modelSettingsSection],
    knownSections: allSections,
    home: rhoHome(env),
    env,
    overrides: settingsOverrides(argv as unknown as Record<string, unknown>, [modelSettingsSection]),
    ...(header?.model === undefined ? {} : { agentConfig: configSource({ model: header.model }, resumePath!) }),
  });
  const modelSettings = resolvedModel.settings.model;
  const { model } = modelSettings;
  if (modelSettings.gguf !== undefined)
    throw new UsageError({
      message:
        "rho eval sql does not run in-process GGUF models yet: serve the model with an OpenAI-compatible server (llama.cpp's llama-server, vLLM, Ollama) and pass --base-url.",
    });
  const queueOnly = [
    ['--label', argv.label],
    ['--priority', argv.priority],
    ['--worker-db-dir', argv.workerDbDir],
  ].find(([, value]) => value !== undefined);
  if (!argv.queue && queueOnly !== undefined)
    throw new UsageError({
      message: `${String(queueOnly[0])} goes with --queue (questions run by the queue's workers).`,
    });
  if (argv.priority !== undefined && !Number.isInteger(argv.priority))
    throw new UsageError({ message: `--priority must be a whole number (got ${argv.priority}).` });
  // Through the queue, the model is called by the workers, with their own key.
  if (!argv.queue && modelSettings.baseURL === undefined && modelSettings.apiKey === undefined)
    throw new UsageError({
      message:
        'Missing API key. Set OPENAI_API_KEY, or pass --base-url (or set OPENAI_BASE_URL) to an OpenAI-compatible endpoint that needs no key.',
    });
  let systemPrompt: string | undefined;
  if (argv.systemPrompt !== undefined) {
    const path = resolve(argv.systemPrompt);
    if (!existsSync(path)) throw new UsageError({ message: `System prompt file not found: ${path}.` });
    systemPrompt = readFileSync(path, 'utf8');
  }

  const home = rhoHome(env);
  let resultsPath: string;
  if (resumePath !== undefined) resultsPath = resumePath;
  else if (argv.output !== undefined) resultsPath = resolve(argv.output);
  else {
    const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '').replace('T', '-');
    try {
      mkdirSync(join(home, 'evals'), { recursive: true });
    } catch (error) {
      throw new UsageError({
        message: `Cannot create ${join(home, 'evals')} for the results: ${(error as Error).message}. Set RHO_HOME to a writable directory or pass --output FILE.`,
      });
    }
    resultsPath = join(home, 'evals', `sql-${dataset.name}-${stamp}.jsonl`);
  }
  if (resumePath === undefined && existsSync(resultsPath))
    throw new UsageError({
      message: `${resultsPath} already exists. Continue it with --resume ${resultsPath}, or choose another --output.`,
    });
  if (!existsSync(dirname(resultsPath)))
    throw new UsageError({
      message: `The folder of ${resultsPath} does not exist. Create it or choose another --output.`,
    });

  const questionTimeout = positive(argv.questionTimeout, '--question-timeout')!;
  const queryTimeout = positive(argv.queryTimeout, '--query-timeout')!;
  const budgets = {
    maxTurns: positive(argv.maxTurns, '--max-turns', true)!,
    ...(argv.maxTokens === undefined ? {} : { maxTokens: positive(argv.maxTokens, '--max-tokens', true)! }),
    ...(argv.maxCost === undefined ? {} : { maxCostUsd: positive(argv.maxCost, '--max-cost')! }),
  };
  let queued: import('@rho/eval').QueuedSqlRunner | undefined;
  if (argv.queue) {
    const { openEvalQueue } = await import('./eval-queue.js');
    const queue = await openEvalQueue(argv, env);
    const source = argv.dataset ?? (header?.dataset === 'chinook' ? 'chinook' : undefined);
    queued = evaluation.createQueuedSqlRunner(
      queue,
      {
        dataset,
        // A resumed bundled run names rho's own copy of the databases: each worker uses its own
        // copy (a path of this machine is a directory the worker need not allow).
        bundled:
          source !== undefined &&
          evaluation.BUNDLED_SQL_DATASETS.includes(source as 'chinook') &&
          (databasesDir === undefined ||
            resolve(databasesDir) === join(evaluation.bundledSqlDatasetDir(source as 'chinook'), 'dev_databases')),
        ...(argv.workerDbDir === undefined ? {} : { workerDatabasesDir: argv.workerDbDir }),
        model,
        labels: argv.label ?? [],
        ...(argv.priority === undefined ? {} : { priority: argv.priority }),
        maxTurns: budgets.maxTurns,
        ...(budgets.maxTokens === undefined ? {} : { maxTokens: budgets.maxTokens }),
        ...(budgets.maxCostUsd === undefined ? {} : { maxCost: budgets.maxCostUsd }),
        questionTimeoutSeconds: questionTimeout,
        queryTimeoutSeconds: queryTimeout,
        ...(systemPrompt === undefined ? {} : { systemPrompt }),
        // The endpoint only when --base-url names it: without it, each worker uses its own; never the key.
        clientOptions: {
          ...(resolvedModel.sources['base_url'] === '--base-url' && modelSettings.baseURL !== undefined
            ? { baseURL: modelSettings.baseURL }
            : {}),
          ...queuedModelOptions(modelSettings.clientOptions),
        },
      },
      {
        onSubmitted: (ids) => {
          if (!argv.json)
            terminal.stderr.write(
              `Submitted ${ids.length} question${ids.length === 1 ? '' : 's'} as tasks labelled ${['eval', ...(argv.label ?? [])].join(',')}; rho worker processes run them (follow with: rho tasks --label eval).\n`,
            );
        },
        onWarning: (message) => terminal.stderr.write(`rho: ${message}\n`),
      },
    );
  }

  const paint = styles(terminal.color);
  const progress = createEvalProgress(terminal, {
    json: argv.json,
    bar: !argv.json && terminal.stderr.isTTY === true,
    paint,
    queued: argv.queue,
  });
  const controller = new AbortController();
  let interrupts = 0;
  const onInterrupt = () => {
    interrupts += 1;
    if (interrupts > 1) process.exit(130);
    progress.note(
      argv.queue
        ? 'Stopping: the tasks not finished are cancelled and will run again on --resume. (Ctrl+C again to quit at once)'
        : 'Stopping: questions in flight are cancelled and will run again on --resume. (Ctrl+C again to quit at once)',
    );
    controller.abort();
  };
  process.on('SIGINT', onInterrupt);
  let report: import('@rho/eval').SqlEvalReport;
  let ranHere = 0;
  let failedHere = 0;
  let firstFailure: string | undefined;
  try {
    report = await evaluation.runSqlEval({
      dataset,
      model,
      clientOptions: modelSettings.clientOptions,
      ...(systemPrompt === undefined ? {} : { systemPrompt }),
      useEvidence: argv.evidence,
      resultsPath,
      resume: resumePath !== undefined,
      sessionsDir: join(home, 'sessions'),
      ...(limit === undefined ? {} : { limit }),
      ...(argv.difficulty === undefined ? {} : { difficulty: argv.difficulty }),
      // Through the queue every question is submitted at once; the workers set the pace.
      concurrency: queued === undefined ? concurrency : Math.max(1, dataset.questions.length),
      questionTimeoutMs: questionTimeout * 1000,
      queryTimeoutMs: queryTimeout * 1000,
      budgets,
      // The sessions run here keep every secret rho knows from the model and their traces.
      ...(queued === undefined
        ? { redactor: await (await import('../known-secrets.js')).processSecretsRedactor(env, home) }
        : {}),
      ...(queued === undefined ? {} : { runSession: queued.runSession }),
      signal: controller.signal,
      onEvent: (event) => {
        if (event.type === 'question_end') {
          ranHere += 1;
          if (event.result.status === 'agent_error') {
            failedHere += 1;
            firstFailure ??= event.result.detail;
          }
        }
        progress.event(event);
      },
    });
  } finally {
    process.off('SIGINT', onInterrupt);
    progress.end();
    await queued?.close({ cancel: true });
  }

  const reportPath = resultsPath.replace(/\.jsonl$/, '') + '.report.json';
  // The report is derived from the results file, so it is rewritten whenever the run is.
  writeFileSync(reportPath, `${JSON.stringify(report, null, 2)}\n`);
  if (!argv.json) {
    terminal.stdout.write(evaluation.formatSqlEvalReport(report));
    terminal.stdout.write(`report: ${reportPath}\n`);
  }
  if (controller.signal.aborted) {
    terminal.stderr.write(
      `Interrupted after ${report.overall.total} of ${report.planned} questions. Continue with: rho eval sql --resume ${resultsPath}\n`,
    );
    return 130;
  }
  if (ranHere > 0 && failedHere === ranHere) {
    terminal.stderr.write(
      `rho: every question failed in its session (${firstFailure ?? 'unknown error'}). Check the model, endpoint and key; continue with --resume ${resultsPath} once fixed.\n`,
    );
    return 1;
  }
  return 0;
}

/** What a queued question's task carries of the model client's options (the workers resolve the rest, and the key, themselves). */
function queuedModelOptions(
  options: import('@rho/core/settings').ModelSettings['clientOptions'],
): import('@rho/eval').QueuedSqlClientOptions {
  const picked = {
    reasoningEffort: options.reasoningEffort,
    firstByteTimeoutMs: options.firstByteTimeoutMs,
    idleTimeoutMs: options.idleTimeoutMs,
    maxRetries: options.maxRetries,
  };
  return Object.fromEntries(Object.entries(picked).filter(([, value]) => value !== undefined));
}

/** Draws a run's progress; see {@link createEvalProgress}. */
export interface EvalProgress {
  /** Shows one progress event. */
  event(event: import('@rho/eval').SqlEvalEvent): void;
  /** A message above the bar. */
  note(text: string): void;
  /** Clears the bar. */
  end(): void;
}

/** Progress on stderr: a redrawn bar on a terminal, one line per question otherwise; JSON lines on stdout with --json. */
export function createEvalProgress(
  terminal: Terminal,
  options: {
    json: boolean;
    bar: boolean;
    paint: ReturnType<typeof import('../terminal.js').styles>;
    /** The questions run on the task queue's workers (`--queue`), not here. */
    queued?: boolean;
  },
): EvalProgress {
  const { paint } = options;
  let drawn = false;
  let state = { done: 0, total: 0, correct: 0, cost: 0, inFlight: 0 };
  const clear = () => {
    if (drawn) terminal.stderr.write('\r\u001b[2K');
    drawn = false;
  };
  const draw = () => {
    const width = 30;
    const filled = state.total === 0 ? 0 : Math.round((state.done / state.total) * width);
    const accuracy = state.done === 0 ? '-' : `${((state.correct / state.done) * 100).toFixed(1)}%`;
    clear();
    terminal.stderr.write(
      `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${state.done}/${state.total}  accuracy ${accuracy}  $${state.cost.toFixed(4)}  running ${state.inFlight}`,
    );
    drawn = true;
  };
  return {
    event(event) {
      if (options.json) {
        terminal.stdout.write(`${JSON.stringify(event)}\n`);
        return;
      }
      switch (event.type) {
        case 'eval_start':
          state = { done: event.done, total: event.total, correct: event.correct, cost: event.cost_usd, inFlight: 0 };
          terminal.stderr.write(
            `rho eval sql: ${event.total} questions${event.done > 0 ? ` (${event.done} already done)` : ''}, ${options.queued === true ? "run by the task queue's workers" : `${event.concurrency} at a time`}; results in ${event.results_path}\n`,
          );
          break;
        case 'question_start':
          state.inFlight += 1;
          break;
        case 'question_end': {
          state = {
            done: event.done,
            total: event.total,
            correct: event.correct,
            cost: event.cost_usd,
            inFlight: Math.max(0, state.inFlight - 1),
          };
          if (!options.bar) {
            const mark = event.result.correct ? paint.green('correct') : paint.red(event.result.status);
            terminal.stderr.write(
              `[${event.done}/${event.total}] ${event.result.question_id} ${event.result.difficulty} ${mark}  accuracy ${(event.accuracy * 100).toFixed(1)}%  $${event.cost_usd.toFixed(4)}\n`,
            );
          }
          break;
        }
        case 'eval_end':
          break;
        default: {
          const unknown: never = event;
          void unknown;
        }
      }
      if (options.bar) draw();
    },
    note(text) {
      clear();
      terminal.stderr.write(`\n${text}\n`);
      if (options.bar) draw();
    },
    end() {
      if (options.bar) {
        clear();
      }
    },
  };
}
