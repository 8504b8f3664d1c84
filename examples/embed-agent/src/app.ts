import { Agent } from '@rho/agent';
import type { ApprovalRequest, RunResult } from '@rho/agent';

/** Options of {@link runAgentApp}. */
export interface AgentAppOptions {
  prompt: string;
  workingDir: string;
  /** SQLite files by alias (`shop` → `shop.sqlite`), relative to the working directory. */
  sqlite?: Record<string, string>;
  model?: string;
  baseURL?: string;
  apiKey?: string;
  /** Answers approval requests: the profile decides which calls need one. */
  approve: (request: ApprovalRequest) => Promise<boolean>;
  /** Receives the answer as it streams. */
  onText?: (text: string) => void;
  /** Told what the toolset wants a person to know (tools not offered, a missing sandbox). */
  onWarning?: (message: string) => void;
}

/**
 * Runs one task with an agent built from rho's `developer` profile: file and shell tools,
 * `delegate`, and a read-only `sqlite` tool for the given databases. Calls the profile wants
 * approved (dangerous patterns such as `rm -rf` or `DELETE FROM`) go to `approve` first.
 */
export async function runAgentApp(options: AgentAppOptions): Promise<RunResult> {
  const databases = Object.fromEntries(
    Object.entries(options.sqlite ?? {}).map(([alias, path]) => [alias, { type: 'sqlite', path }]),
  );
  const agent = new Agent({
    profile: 'developer',
    workingDir: options.workingDir,
    databases,
    systemPrompt: 'You are a careful engineer. Answer from the files and the databases you can reach.',
    model: options.model ?? 'gpt-4o-mini',
    clientOptions: {
      ...(options.baseURL === undefined ? {} : { baseURL: options.baseURL }),
      apiKey: options.apiKey ?? 'no-key',
      maxRetries: 2,
    },
    ...(options.onWarning === undefined ? {} : { onWarning: options.onWarning }),
  });
  try {
    const session = agent.createSession({ approver: options.approve });
    return await session.run(options.prompt, {
      onEvent: (event) => {
        if (event.type === 'text') options.onText?.(event.text);
      },
    });
  } finally {
    await agent.close();
  }
}
