import type { Argv } from 'yargs';
import type { Terminal } from '../terminal.js';

/**
 * Registers the default command, `rho [TASK]` (`$0 [task..]`): one task, run and exit, or the
 * REPL without one, with every flag of a run. The handler loads the agent runtime
 * (`run-command.js`) only when it runs, so `--help` and the other commands stay fast.
 */
export function registerRunCommand(
  parser: Argv,
  terminal: Terminal,
  env: NodeJS.ProcessEnv,
  setExit: (code: number) => void,
): Argv {
  return parser.command(
    '$0 [task..]',
    'Run one task and exit',
    (command) =>
      command
        .positional('task', { type: 'string', array: true, describe: 'The task, in words (quote it, or use -p)' })
        .option('prompt', { alias: 'p', type: 'string', describe: 'The task (takes precedence over TASK)' })
        .option('model', {
          alias: 'm',
          type: 'string',
          describe: 'Model name (default: $OPENAI_MODEL or gpt-5-mini)',
        })
        .option('base-url', { type: 'string', describe: 'OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)' })
        .option('profile', {
          type: 'string',
          describe:
            'Permission profile: readonly, developer, unrestricted, developer-bash-only, or a YAML path (default: $RHO_PROFILE or readonly)',
        })
        .option('working-dir', {
          alias: 'w',
          type: 'string',
          describe: 'Working directory of the tools (default: current directory)',
        })
        .option('backend', {
          type: 'string',
          describe:
            'Where the file and shell tools run: local, sandbox (a bubblewrap container), daytona (default: $RHO_BACKEND; sandbox for the unrestricted and eval profiles where bubblewrap works, else local)',
        })
        .option('dockerfile', {
          type: 'string',
          describe: 'Daytona: build the sandbox from this Dockerfile (implies --backend daytona)',
        })
        .option('snapshot', {
          type: 'string',
          describe: 'Daytona: create the sandbox from this snapshot (implies --backend daytona)',
        })
        .option('keep-sandbox', {
          type: 'boolean',
          describe: 'Daytona: keep the sandbox when rho exits (default: delete it)',
        })
        .option('workspace', {
          type: 'string',
          describe:
            'Where the agent changes files: in-place (the working directory; the default) or isolated (a workspace of its own: rho diff, rho apply, rho discard; default: $RHO_WORKSPACE)',
        })
        .option('checkpoints', {
          type: 'boolean',
          describe:
            'In-place runs: checkpoint the files after every turn, for rho undo (default: on under a profile that may write; --no-checkpoints turns it off)',
        })
        .option('system-prompt', {
          alias: 's',
          type: 'string',
          describe: 'Markdown prompt file with YAML frontmatter and template variables',
        })
        .option('var', {
          type: 'string',
          requiresArg: true,
          describe: 'Template variable key=value for the prompt file (repeat --var for each)',
        })
        .option('vars-file', { type: 'string', describe: 'YAML file of template variables' })
        .option('config', { alias: 'c', type: 'string', describe: 'Agent configuration YAML (flags override it)' })
        .option('resume', {
          alias: 'r',
          type: 'string',
          describe: 'Continue a session: latest, an id, a unique id prefix, or a session directory',
        })
        .option('list', { alias: 'l', type: 'boolean', default: false, describe: 'List saved sessions and exit' })
        .option('db-config', {
          type: 'string',
          describe: 'Database aliases YAML (default: $RHO_DB_CONFIG or $RHO_HOME/databases.yaml)',
        })
        .option('tool-package', {
          type: 'string',
          requiresArg: true,
          describe: "Load tools from this package name or path (repeatable; adds to the config's tool_packages)",
        })
        .option('reasoning-effort', {
          type: 'string',
          describe: 'Reasoning effort for reasoning models: none, minimal, low, medium, high, xhigh',
        })
        .option('auto-approve', {
          alias: 'y',
          type: 'boolean',
          default: false,
          describe: 'Approve every tool call without asking',
        })
        .option('when-unattended', {
          type: 'string',
          describe:
            'With nobody at the terminal: wait (a call waits for rho approve / rho deny; the default) or withhold (such tools are not offered)',
        })
        .option('approval-timeout', {
          type: 'string',
          describe: 'How long a call waits for an answer: 30s, 10m, 2h, 1d (default 1h)',
        })
        .option('on-timeout', {
          type: 'string',
          describe: 'What a timeout answers: deny (default) or approve (never for a dangerous pattern)',
        })
        .option('output', {
          alias: 'o',
          type: 'string',
          describe: 'Write the final answer to this file (never overwrites)',
        })
        .option('json', { type: 'boolean', default: false, describe: 'Print every event as one JSON line on stdout' })
        .option('max-turns', { type: 'string', describe: 'Stop after this many model calls' })
        .option('max-tokens', { type: 'string', describe: 'Stop when the session has used this many tokens' })
        .option('max-cost', { type: 'string', describe: 'Stop when the session has cost this many USD' })
        .option('first-byte-timeout', {
          type: 'string',
          describe:
            'Seconds to wait for a model answer to start (default: $RHO_FIRST_BYTE_TIMEOUT or 60; a CPU-hosted model may need minutes)',
        })
        .option('idle-timeout', {
          type: 'string',
          describe: 'Seconds to wait between two chunks of a streamed answer (default: $RHO_IDLE_TIMEOUT or 60)',
        })
        .option('max-answer-time', {
          type: 'string',
          describe:
            'Seconds one model answer may take in all, however steadily it streams (default: $RHO_MAX_ANSWER_TIME or 1200)',
        })
        .option('max-answer-size', {
          type: 'string',
          describe:
            'Characters of text, reasoning and tool arguments one answer may have (default: $RHO_MAX_ANSWER_SIZE or 4194304)',
        })
        .option('max-retries', {
          type: 'string',
          describe:
            'Retries of a failed model request: rate limits, server errors, timeouts (default: $RHO_MAX_RETRIES or 8)',
        })
        .option('context-window', {
          type: 'string',
          describe:
            "The model's context window in tokens, for automatic compaction (default: $RHO_CONTEXT_WINDOW, the config, what the server reports, the known models, else 32768)",
        })
        .option('label', {
          type: 'string',
          requiresArg: true,
          describe: 'A label key=value of the session in the fleet, for rho ps --label and rho stats (repeatable)',
        })
        .option('otel', {
          type: 'string',
          describe:
            'Export OpenTelemetry spans (GenAI conventions) over OTLP/HTTP to this collector (default: $RHO_OTEL_ENDPOINT, otel.endpoint of config.yaml, $OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318)',
        })
        .option('otel-content', {
          type: 'boolean',
          describe: 'With --otel: export prompts, answers and tool arguments and results too (default: not exported)',
        })
        .option('debug', { type: 'boolean', default: false, describe: 'Show stack traces on failures' }),
    async (argv) => {
      const { runCommand } = await import('./run-command.js');
      const { task, ...rest } = argv as unknown as import('./run-command.js').RunArguments & {
        task?: string[];
      };
      // `--otel` takes an optional URL: a word after it that is not one is the task's first word.
      let words = task;
      if (typeof rest.otel === 'string' && rest.otel !== '' && !/^[a-z][a-z0-9+.-]*:\/\//i.test(rest.otel)) {
        words = [rest.otel, ...(task ?? [])];
        rest.otel = '';
      }
      // Repeatable flags (--var, --tool-package, --label) are one value or a list: the settings take either.
      setExit(
        await runCommand(
          {
            ...rest,
            ...(words === undefined ? {} : { prompt: words }),
            p: typeof rest.p === 'string' ? rest.p : undefined,
          },
          terminal,
          env,
        ),
      );
    },
  );
}
