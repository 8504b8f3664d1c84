import { EXIT_CODE_HELP } from './exit-code-map.js';
import { REPL_COMMANDS } from './slash-commands.js';

/** Environment variables rho reads, with what they do. */
export const ENVIRONMENT_HELP: readonly (readonly [string, string])[] = [
  ['OPENAI_API_KEY', 'API key of the endpoint (also read from ./.env)'],
  ['OPENAI_BASE_URL', 'OpenAI-compatible endpoint, e.g. http://localhost:11434/v1 (also ./.env)'],
  ['OPENAI_MODEL', 'model when --model is not given (default gpt-5-mini; also ./.env)'],
  ['RHO_HOME', 'sessions, profiles, history, databases.yaml (default $XDG_CONFIG_HOME/rho or ~/.config/rho)'],
  ['RHO_PROFILE', 'permission profile when --profile is not given (default readonly)'],
  ['RHO_DB_CONFIG', 'database aliases YAML when --db-config is not given'],
  ['RHO_BACKEND', 'where tools run when --backend and the config say nothing: local, sandbox, daytona'],
  ['RHO_FIRST_BYTE_TIMEOUT', 'seconds to wait for an answer to start (default 60)'],
  ['RHO_IDLE_TIMEOUT', 'seconds to wait between streamed chunks (default 60)'],
  ['RHO_MAX_ANSWER_TIME', 'seconds one model answer may take in all (default 1200)'],
  ['RHO_MAX_ANSWER_SIZE', 'characters one model answer may have (default 4194304)'],
  ['RHO_MAX_RETRIES', 'retries of a failed model request (default 8)'],
  ['RHO_CONTEXT_WINDOW', 'context window in tokens when --context-window is not given'],
  [
    'RHO_FLEET_URL',
    'PostgreSQL url of the fleet (sessions of every node) and the task queue when --fleet is not given (${VAR} expands)',
  ],
  ['RHO_FLEET_HOST', "host name sessions register under in the fleet (default: the machine's)"],
  ['RHO_MARKDOWN', '0: print answers as written, even on a terminal'],
  ['RHO_OTEL_ENDPOINT', 'export OpenTelemetry spans to this OTLP/HTTP collector (as --otel URL)'],
  ['RHO_OTEL_CAPTURE_CONTENT', 'true: export prompts, answers and tool I/O too (as --otel-content)'],
  ['DAYTONA_API_KEY', 'API key of Daytona, for --backend daytona (DAYTONA_API_URL: a self-hosted one)'],
  ['RHO_AGENT_*', "the Python rho-agent's variables are read too (see docs/user-guide.md)"],
  ['NO_COLOR', 'no colours (answers are still laid out)'],
];

/** Examples shown in `rho --help`. */
export const EXAMPLES_HELP: readonly (readonly [string, string])[] = [
  ['rho', 'open the interactive REPL'],
  ['rho "why does the build fail?"', 'run one task (readonly profile) and exit'],
  ['rho --profile developer -y "fix the failing test"', 'let it edit files, approving every call'],
  ['rho -s review.md --var who=ZELDA "go"', 'a prompt file with a template variable'],
  ['rho --base-url http://localhost:11434/v1 -m qwen3 "hi"', 'a local OpenAI-compatible server'],
  ['rho --resume latest "and now the docs"', 'continue the newest session with a new task'],
  ['rho ps; rho watch ab12; rho kill ab12', 'list, follow and stop running agents'],
  ['rho --json "list the tables" | jq .type', 'every event as a JSON line, for scripts'],
  ['rho --fleet postgres://db/rho ps --host node-a', "a fleet: every node's sessions, filtered"],
  ['rho stats cost --by label', "the fleet's cost and tokens per label"],
  ['rho dashboard', 'sessions, costs and tools in the browser (127.0.0.1, with a token)'],
  ['rho db check warehouse', "what the alias's account can do beyond reading, with a GRANT script"],
  ['rho submit -f tasks.jsonl; rho worker -j 4', 'queue tasks; run them on workers anywhere (--fleet URL)'],
];

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** Two columns; the second wraps with a hanging indent, or goes under the first when it is too wide. */
function table(rows: readonly (readonly [string, string])[], width: number): string {
  const indent = '  ';
  const left = Math.max(...rows.map(([key]) => key.length)) + 2;
  const column = indent.length + left;
  const out: string[] = [];
  for (const [key, text] of rows) {
    if (column + 20 <= width) {
      const lines = wrap(text, width - column);
      out.push(
        `${indent}${key.padEnd(left)}${lines[0] ?? ''}`.trimEnd(),
        ...lines.slice(1).map((line) => `${' '.repeat(column)}${line}`),
      );
    } else {
      out.push(`${indent}${key}`, ...wrap(text, width - 6).map((line) => `      ${line}`));
    }
  }
  return out.join('\n');
}

/** The sections after the options in `rho --help`, laid out for `width` columns: environment, examples, exit codes, slash commands. */
export function helpEpilogue(width: number): string {
  const paragraph = (text: string) => wrap(text, width).join('\n');
  return [
    `Environment:\n${table(ENVIRONMENT_HELP, width)}`,
    `Examples:\n${table(EXAMPLES_HELP, width)}`,
    `Exit codes:\n${table(
      EXIT_CODE_HELP.map(([code, text]) => [String(code), text] as const),
      width,
    )}`,
    `Slash commands (in the REPL):\n${table(
      Object.entries(REPL_COMMANDS).map(([name, text]) => [name, text.replace(/^\/\S+ [^:]*: /, '')] as const),
      width,
    )}`,
    paragraph('Approvals: Enter refuses; y yes; c always this exact call; a always this tool.'),
    paragraph(
      'Per-project instructions: AGENTS.md and .rho/instructions.md from the working directory up to the repository root.',
    ),
  ].join('\n\n');
}
